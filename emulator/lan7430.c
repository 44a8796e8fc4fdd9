/*
 * QEMU model of the Microchip LAN7430 PCIe Gigabit Ethernet controller
 * with its internal LAN88xx-compatible PHY: the device core (DMA access,
 * the wire schedule, reset).
 *
 * The specification is the upstream Linux lan743x driver; see
 * emulator/README.md in the lab repository for what is modelled and every
 * assumption made where the driver does not pin the hardware down.  The
 * model is split by concern into compilation units (lan7430-*.c) that
 * share the state and prototypes in lan7430-int.h; the PCI/QOM type is
 * in lan7430-pci.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "lan7430-int.h"
#include "trace.h"

/* ------------------------------------------------------------------------ */
/* DMA access, fault opportunities, the wire schedule                        */

void l7_dma_read(Lan7430State *s, dma_addr_t a, void *buf, dma_addr_t len,
                 bool desc)
{
    pci_dma_read(PCI_DEVICE(s), a, buf, len);
    if (desc) {
        s->cnt.dma_desc_read_bytes += len;
    } else {
        s->cnt.dma_data_read_bytes += len;
    }
}

void l7_dma_write(Lan7430State *s, dma_addr_t a, const void *buf,
                  dma_addr_t len, bool desc)
{
    pci_dma_write(PCI_DEVICE(s), a, buf, len);
    if (desc) {
        s->cnt.dma_desc_write_bytes += len;
    } else {
        s->cnt.dma_data_write_bytes += len;
    }
}

/* does fault f fire on this opportunity? counts it if so */
bool l7_fault_hit(Lan7430State *s, int f)
{
    L7Fault *ft = &s->fault[f];

    if (ft->count) {
        ft->count--;
    } else if (ft->every && ++ft->seen >= ft->every) {
        ft->seen = 0;
    } else {
        return false;
    }
    s->cnt.fault_fired[f]++;
    return true;
}

/*
 * time one frame (without FCS) occupies the wire at rate_mbps, rounded up:
 * the schedule never books less than the wire takes
 */
int64_t l7_wire_ns(Lan7430State *s, size_t len)
{
    return DIV_ROUND_UP(l7_wire_bytes(len) * 8 * 1000, s->rate_mbps);
}

/*
 * When a frame may start on a wire direction that is free from free on.
 * A frame never starts before the previous one ended.  If frames were
 * waiting (backlog: held back by pacing), they go back to back from where
 * the wire became free, even if the pacing timer fired late (up to
 * rate-catchup-us), so timer latency under TCG does not lower the rate.
 * Otherwise the wire was idle and the frame starts now.
 */
static int64_t l7_wire_start(Lan7430State *s, int64_t free, bool backlog)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t catchup = (int64_t)s->rate_catchup_us * 1000;

    return backlog ? MAX(free, now - catchup) : MAX(free, now);
}

/*
 * Book the wire for a frame (or TSO chain) of wire time ns on the direction
 * whose wire is free from *free on; returns when it may be handed over
 * (to the peer, or to the driver on RX): when its last bit has left the
 * wire, less rate-burst-us.
 */
int64_t l7_wire_book(Lan7430State *s, int64_t *free, bool backlog,
                     int64_t ns)
{
    *free = l7_wire_start(s, *free, backlog) + ns;
    return *free - (int64_t)s->rate_burst_us * 1000;
}

/*
 * The wire meter checks the schedule from outside it.  Every frame handed
 * over while paced (TX: to the peer, a TSO chain at one instant; RX: to
 * the MAC) adds its wire bits, computed from its length here, not taken
 * from the booking; the meter keeps the largest excess of the bits handed
 * over in a window of the virtual clock over rate x the window's length,
 * over every window [start, t] and (t0, t] with t0 a handover instant
 * (start: when the schedule began, l7_meter_start).  The schedule bounds
 * it: a frame is handed over at most rate-burst-us before its last bit
 * left the wire, and the frames booked after t0 (all that are handed over
 * after it: one frame waits at a time) start at most rate-catchup-us
 * before t0, so the excess is at most (rate-burst-us + rate-catchup-us) x
 * rate, however late the timers fired or however slowly the host ran.
 * Counters tx/rx_wire_excess_max_bits; tests/test_emulator_faults.py and
 * the qtests rate-tx/rate-rx check them against that bound.
 */
void l7_meter_start(L7WireMeter *m)
{
    m->t = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    m->base = 0;
    m->sum = 0;
    m->peak = 0;
}

void l7_meter_frame(Lan7430State *s, L7WireMeter *m, int64_t now,
                    size_t len, uint64_t *bytes)
{
    if (now != m->t) {
        m->base = MAX(m->base + m->sum, 0) -
                  (int64_t)s->rate_mbps * (now - m->t);
        m->sum = 0;
        m->t = now;
    }
    m->sum += (int64_t)l7_wire_bytes(len) * 8 * 1000;
    m->peak = MAX(m->peak, m->base + m->sum);
    *bytes += l7_wire_bytes(len);
}

/* ------------------------------------------------------------------------ */
/* reset                                                                     */

static void l7_load_mac(Lan7430State *s)
{
    const uint8_t *m = s->conf.macaddr.a;

    s->regs[L7_MAC_RX_ADDRL >> 2] = m[0] | (m[1] << 8) | (m[2] << 16) |
                                    ((uint32_t)m[3] << 24);
    s->regs[L7_MAC_RX_ADDRH >> 2] = m[4] | (m[5] << 8);
}

void l7_dma_rx_reset(Lan7430State *s, int ch)
{
    l7_wb_cancel(s, ch);
    l7_rx_batch_discard(s, ch);
    s->rx_head[ch] = 0;
    s->rx_tail[ch] = 0;
    s->rx_swr_bad &= ~(1u << ch);
    s->dmac_run &= ~L7_DMAC_CMD_START_R(ch);
    s->dmac_stop &= ~L7_DMAC_CMD_STOP_R(ch);
    s->dmac_int_sts &= ~L7_DMAC_INT_RXFRM(ch);
    s->regs[L7_RX_CFG_A(ch) >> 2] = 0;
    s->regs[L7_RX_CFG_B(ch) >> 2] = 0;
    s->regs[L7_RX_CFG_C(ch) >> 2] = 0;
}

void l7_dma_tx_reset(Lan7430State *s, int ch)
{
    if (s->tx_held_ch == ch) {
        s->tx_held = false;
    }
    l7_tx_batch_discard(s, ch);
    s->tx_head[ch] = 0;
    s->tx_tail[ch] = 0;
    s->dmac_run &= ~L7_DMAC_CMD_START_T(ch);
    s->dmac_stop &= ~L7_DMAC_CMD_STOP_T(ch);
    s->dmac_int_sts &= ~L7_DMAC_INT_TX_IOC(ch);
    s->regs[L7_TX_CFG_A(ch) >> 2] = 0;
    s->regs[L7_TX_CFG_B(ch) >> 2] = 0;
    s->regs[L7_TX_CFG_C(ch) >> 2] = 0;
}

void l7_dmac_reset(Lan7430State *s)
{
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        l7_dma_rx_reset(s, ch);
    }
    for (ch = 0; ch < s->ntx; ch++) {
        l7_dma_tx_reset(s, ch);
    }
    s->dmac_int_sts = 0;
    s->dmac_int_en = 0;
    s->dmac_run = 0;
    s->dmac_stop = 0;
    s->regs[L7_DMAC_CFG >> 2] = 0;
    s->regs[L7_DMAC_COAL_CFG >> 2] = 0;
    s->regs[L7_DMAC_OBFF_CFG >> 2] = 0;
}

void l7_stats_reset(Lan7430State *s)
{
    memset(&s->regs[L7_STAT_FIRST >> 2], 0,
           (L7_STAT_LAST - L7_STAT_FIRST + 4));
}

/* Light reset: everything in the CSR space except PCI config and counters */
void l7_soft_reset(Lan7430State *s)
{
    int v;

    memset(s->regs, 0, sizeof(s->regs));
    s->int_sts = 0;
    s->int_en = 0;
    s->vec_en = 0;
    s->vec_auto_clr = 0;
    memset(s->vec_map, 0, sizeof(s->vec_map));
    memset(s->mod_map, 0, sizeof(s->mod_map));
    memset(s->mod_cfg, 0, sizeof(s->mod_cfg));
    s->vec_asserted = 0;
    l7_wb_delay_clear(s);
    for (v = 0; v < L7_MAX_VECTORS; v++) {
        s->vec_last_fire[v] = 0;
        s->vec_mod_due[v] = 0;
        s->vec_mod_expired[v] = false;
        if (s->mod_timer[v]) {
            timer_del(s->mod_timer[v]);
        }
    }
    l7_dmac_reset(s);
    s->fct_rx_en = 0;
    s->fct_tx_en = 0;
    s->fct_int_sts = 0;
    memset(s->op_due, 0, sizeof(s->op_due));
    s->rx_mac_finishing = false;
    s->tx_mac_finishing = false;
    s->rx_dma_finishing = 0;
    if (s->op_timer) {
        timer_del(s->op_timer);
    }
    s->tx_pause_until = 0;
    s->pause_ch = 0;            /* no XON on a reset: the partner, if it */
    if (s->pause_refresh_timer) {   /* honours pause, waits its pause out */
        timer_del(s->pause_refresh_timer);
    }
    for (v = 0; v < L7_NUM_RX_CH; v++) {
        l7_rx_fifo_flush(s, v, false);
    }
    /* MAC_RX: max size 1518 (FCS included); receiver/transmitter disabled */
    s->mac_rx = (1518u << L7_MAC_RX_MAX_SHIFT) | L7_MAC_RX_RXD;
    s->mac_tx = L7_MAC_TX_TXD;
    memset(s->dp_ram, 0, sizeof(s->dp_ram));
    s->ptp_enabled = false;
    s->ptp_offset_ns = 0;
    s->tx_waiting = false;
    s->tx_rr = 0;
    s->regs[L7_PMT_CTL >> 2] = L7_PMT_CTL_READY;
    s->regs[L7_HW_CFG >> 2] = 0;
    s->regs[L7_MAC_CR >> 2] = (1u << 12) | (1u << 11); /* ADD | ASD */
    l7_load_mac(s);
    if (s->intx_level) {
        s->intx_level = false;
        pci_set_irq(PCI_DEVICE(s), 0);
    }
    trace_lan743x_reset("light");
    /* frames held back for a full ring are now dropped (receiver off) */
    l7_rx_kick(s);
}

