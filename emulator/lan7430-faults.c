/*
 * QEMU model of the Microchip LAN7430: pacing and fault injection timers.
 *
 * A compilation unit of the model: the shared state and the functions other
 * units call are declared in lan7430-int.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "lan7430-int.h"
#include "trace.h"

/* ------------------------------------------------------------------------ */
/* pacing and fault injection timers                                         */

const char *const l7_fault_names[L7F_NUM] = {
    [L7F_RX_LEN_SHORT] = "rx-len-short",
    [L7F_RX_LEN_LONG] = "rx-len-long",
    [L7F_RX_LEN_ZERO] = "rx-len-zero",
    [L7F_DROP_FS] = "drop-fs",
    [L7F_DROP_LS] = "drop-ls",
    [L7F_SPURIOUS_IRQ] = "spurious-irq",
    [L7F_WB_DELAY_DESC] = "wb-delay-desc",
    [L7F_WB_DELAY_HEAD] = "wb-delay-head",
    [L7F_LINK_FLAP] = "link-flap",
    [L7F_RX_STALL] = "rx-stall",
    [L7F_EXT_MISSING] = "ext-missing",
    [L7F_RX_SWR_HEAD] = "rx-swr-head",
    [L7F_RX_IRQ_HOLD] = "rx-irq-hold",
};

void l7_tx_pace_cb(void *opaque)
{
    Lan7430State *s = opaque;

    l7_tx_kick(s);
    l7_update_irq(s);
}

void l7_rx_pace_cb(void *opaque)
{
    l7_rx_kick(opaque);
}

void l7_rx_stall_cb(void *opaque)
{
    Lan7430State *s = opaque;

    s->rx_stalled = false;
    trace_lan743x_fault_rx_stall_end();
    l7_rx_kick(s);
}

/* the rx-irq-hold fault is over: the RX interrupts pending are sent */
void l7_rx_irq_hold_cb(void *opaque)
{
    Lan7430State *s = opaque;

    s->rx_irq_held = false;
    trace_lan743x_fault_rx_irq_hold_end();
    l7_update_irq(s);
}

/* the held-back write-backs of a wb-delay fault arrive */
void l7_wb_cb(void *opaque)
{
    Lan7430State *s = opaque;
    L7WbPending *w = &s->wb;
    int i;

    if (!w->active) {
        return;
    }
    for (i = 0; i < w->n; i++) {
        uint32_t le = cpu_to_le32(w->val[i]);
        l7_dma_write(s, w->addr[i], &le, 4, true);
    }
    if (w->head) {
        l7_rx_head_wb(s, w->ch, w->head_idx);
        l7_rx_signal(s, w->ch, 1, NULL);
    }
    w->active = false;
    w->n = 0;
    trace_lan743x_fault_wb_done(w->ch, w->head ? "head" : "descriptor");
    l7_update_irq(s);
    l7_rx_kick(s);
}

/* channel ch (or all, ch < 0) was reset: held-back write-backs are void */
void l7_wb_cancel(Lan7430State *s, int ch)
{
    if (s->wb.active && (ch < 0 || s->wb.ch == ch)) {
        s->wb.active = false;
        s->wb.n = 0;
        if (s->wb_timer) {
            timer_del(s->wb_timer);
        }
    }
}

/* one MSI-X/MSI message (or an INTx pulse) with no source pending */
static void l7_spurious_irq(Lan7430State *s)
{
    PCIDevice *d = PCI_DEVICE(s);
    uint32_t mask = s->fault_irq_vectors & ((1u << s->nvec) - 1);
    int i, v = 0;

    if (!mask) {
        mask = 1;
    }
    for (i = 0; i < s->nvec; i++) {
        v = (s->fault_irq_next + i) % s->nvec;
        if (mask & (1u << v)) {
            break;
        }
    }
    s->fault_irq_next = (v + 1) % s->nvec;
    s->cnt.irq_spurious[v]++;
    trace_lan743x_fault_irq(v);
    if (msix_enabled(d)) {
        if (v < d->msix_entries_nr) {
            msix_notify(d, v);
        }
    } else if (msi_enabled(d)) {
        unsigned nr = msi_nr_vectors_allocated(d);
        msi_notify(d, v < nr ? v : 0);
    } else if (!s->intx_level) {
        pci_set_irq(d, 1);
        pci_set_irq(d, 0);
    }
}

void l7_fault_irq_tick(void *opaque)
{
    Lan7430State *s = opaque;

    if (l7_fault_hit(s, L7F_SPURIOUS_IRQ)) {
        l7_spurious_irq(s);
    }
    if (l7_fault_armed(s, L7F_SPURIOUS_IRQ)) {
        timer_mod(s->fault_irq_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  (int64_t)MAX(s->fault_irq_period_us, 1) * SCALE_US);
    }
}

void l7_flap_up_cb(void *opaque)
{
    Lan7430State *s = opaque;

    s->flap_down = false;
    trace_lan743x_fault_link(1, s->fault_flap_down_ms);
    l7_rx_kick(s);
    l7_tx_kick(s);
    l7_update_irq(s);
}

void l7_flap_tick(void *opaque)
{
    Lan7430State *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (!s->flap_down && l7_fault_hit(s, L7F_LINK_FLAP)) {
        s->flap_down = true;
        s->bmsr_link_latched_low = true;
        trace_lan743x_fault_link(0, s->fault_flap_down_ms);
        timer_mod(s->flap_up_timer,
                  now + (int64_t)s->fault_flap_down_ms * SCALE_MS);
        l7_rx_kick(s);          /* frames held for a full ring: dropped */
    }
    if (l7_fault_armed(s, L7F_LINK_FLAP)) {
        timer_mod(s->flap_tick_timer,
                  now + (int64_t)MAX(s->fault_flap_period_ms, 1) * SCALE_MS);
    }
}

/* clear every fault and end the ones in progress */
void l7_fault_clear(Lan7430State *s)
{
    memset(s->fault, 0, sizeof(s->fault));
    timer_del(s->fault_irq_timer);
    timer_del(s->flap_tick_timer);
    if (s->flap_down) {
        timer_del(s->flap_up_timer);
        l7_flap_up_cb(s);
    }
    if (s->rx_stalled) {
        timer_del(s->rx_stall_timer);
        l7_rx_stall_cb(s);
    }
    if (s->rx_irq_held) {
        timer_del(s->rx_irq_hold_timer);
        l7_rx_irq_hold_cb(s);
    }
    s->rx_swr_bad = 0;
    if (s->wb.active) {
        timer_del(s->wb_timer);
        l7_wb_cb(s);
    }
}
