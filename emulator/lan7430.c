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
#include "qemu/error-report.h"
#include "sysemu/runstate.h"
#include "lan7430-int.h"
#include "trace.h"

/* ------------------------------------------------------------------------ */
/* DMA access, fault opportunities, the wire schedule                        */

/*
 * strict-dma: a device write the driver cannot have wanted (a write-back
 * after its channel's stop completed, into a ring the driver has
 * reprogrammed, or a DMA the (v)IOMMU refused) fails the run: reported
 * on stderr, counted (strict_dma_errors), and the guest is reported
 * panicked (QMP event GUEST_PANICKED; the -action panic= setting decides
 * between shutdown, the default, and pause).  Without strict-dma the
 * same writes are only counted.
 */
void l7_strict_dma_fail(Lan7430State *s, const char *what, int ch)
{
    if (!s->strict_dma) {
        return;
    }
    s->cnt.strict_dma_errors++;
    error_report("lan7430: strict-dma: %s (channel %d)", what, ch);
    if (!s->strict_failed) {
        s->strict_failed = true;
        /* from the main loop: not within a timer run or an MMIO access */
        qemu_bh_schedule(s->strict_bh);
    }
}

void l7_strict_bh(void *opaque)
{
    qemu_system_guest_panicked(NULL);
}

/* a DMA the bus refused (with a vIOMMU: an unmapped address) */
static void l7_dma_result(Lan7430State *s, MemTxResult r, dma_addr_t a,
                          bool write)
{
    if (r != MEMTX_OK) {
        s->cnt.dma_errors++;
        if (s->strict_dma) {
            error_report("lan7430: DMA %s at 0x%" PRIx64 " refused",
                         write ? "write" : "read", (uint64_t)a);
            l7_strict_dma_fail(s, "DMA refused by the bus/IOMMU", -1);
        }
    }
}

void l7_dma_read(Lan7430State *s, dma_addr_t a, void *buf, dma_addr_t len,
                 bool desc)
{
    l7_dma_result(s, pci_dma_read(PCI_DEVICE(s), a, buf, len), a, false);
    if (desc) {
        s->cnt.dma_desc_read_bytes += len;
    } else {
        s->cnt.dma_data_read_bytes += len;
    }
}

void l7_dma_write(Lan7430State *s, dma_addr_t a, const void *buf,
                  dma_addr_t len, bool desc)
{
    l7_dma_result(s, pci_dma_write(PCI_DEVICE(s), a, buf, len), a, true);
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
    s->rx_tail_reg[ch] = 0;
    l7_fetch_cancel(s, false, ch);
    s->rx_dma_due[ch] = 0;
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
    s->tx_tail_reg[ch] = 0;
    l7_fetch_cancel(s, true, ch);
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
    s->coal_idle = false;
    s->coal_due = 0;
    if (s->coal_timer) {
        timer_del(s->coal_timer);
    }
    s->regs[L7_DMAC_OBFF_CFG >> 2] = 0;
}

/*
 * Statistics counter width (stats-counter-bits): 32, or 20 as the LAN78xx
 * driver says of that family's MAC (lan78xx_init_stats: 0xFFFFF for the
 * frame and error counters, 32 bits for the byte and EEE LPI counters).
 * The LAN743x's widths are not documented publicly.
 */
uint32_t l7_stat_mask(Lan7430State *s, hwaddr off)
{
    switch (off) {
    case 0x121C: case 0x1220: case 0x1224:      /* RX U/B/M byte counts */
    case 0x1258: case 0x125C:                   /* EEE RX LPI */
    case 0x12A0: case 0x12A4: case 0x12A8:      /* TX U/B/M byte counts */
    case 0x12DC: case 0x12E0:                   /* EEE TX LPI */
        return 0xFFFFFFFFu;
    }
    return s->stats_bits >= 32 ? 0xFFFFFFFFu : (1u << s->stats_bits) - 1;
}

/*
 * Descriptor fetch latency (desc-fetch-ns): a tail write is acted on that
 * long after it, on the virtual clock; the register reads back the value
 * written at once.  Each write is fetched at its own time (up to
 * L7_FETCH_MAX in flight per channel; beyond, the newest one takes the
 * last slot's value).  0: within the write (the older model).
 */
static int l7_fetch_slot(bool tx, int ch)
{
    return tx ? L7_NUM_RX_CH + ch : ch;
}

static void l7_fetch_rearm(Lan7430State *s)
{
    int64_t next = INT64_MAX;
    int i;

    for (i = 0; i < L7_NUM_RX_CH + L7_MAX_TX_CH; i++) {
        if (s->fetch_n[i]) {
            next = MIN(next, s->fetch[i][0].due);
        }
    }
    if (next == INT64_MAX) {
        timer_del(s->fetch_timer);
    } else {
        timer_mod(s->fetch_timer, next);
    }
}

void l7_fetch_cancel(Lan7430State *s, bool tx, int ch)
{
    s->fetch_n[l7_fetch_slot(tx, ch)] = 0;
    if (s->fetch_timer) {
        l7_fetch_rearm(s);
    }
}

/* the tail register of a channel written (accepted value val): true when
 * the DMA acts on it now, false when it will at its fetch */
bool l7_tail_write(Lan7430State *s, bool tx, int ch, uint32_t val)
{
    int i = l7_fetch_slot(tx, ch);
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (tx) {
        s->tx_tail_reg[ch] = val;
    } else {
        s->rx_tail_reg[ch] = val;
    }
    if (!s->desc_fetch_ns && !s->fetch_n[i]) {
        if (tx) {
            s->tx_tail[ch] = val;
        } else {
            s->rx_tail[ch] = val;
        }
        return true;
    }
    s->cnt.desc_fetch_delayed++;
    if (s->fetch_n[i] == L7_FETCH_MAX) {
        s->fetch[i][L7_FETCH_MAX - 1].val = val;
        return false;
    }
    s->fetch[i][s->fetch_n[i]].due = now + s->desc_fetch_ns;
    s->fetch[i][s->fetch_n[i]++].val = val;
    l7_fetch_rearm(s);
    return false;
}

void l7_fetch_timer_cb(void *opaque)
{
    Lan7430State *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    bool rx = false;
    int i, ch;

    for (i = 0; i < L7_NUM_RX_CH + L7_MAX_TX_CH; i++) {
        bool moved = false;

        while (s->fetch_n[i] && s->fetch[i][0].due <= now) {
            if (i < L7_NUM_RX_CH) {
                s->rx_tail[i] = s->fetch[i][0].val;
            } else {
                s->tx_tail[i - L7_NUM_RX_CH] = s->fetch[i][0].val;
            }
            memmove(&s->fetch[i][0], &s->fetch[i][1],
                    (L7_FETCH_MAX - 1) * sizeof(L7Fetch));
            s->fetch_n[i]--;
            moved = true;
        }
        if (!moved) {
            continue;
        }
        if (i < L7_NUM_RX_CH) {
            rx = true;
        } else if ((ch = i - L7_NUM_RX_CH) < s->ntx) {
            l7_tx_process(s, ch);
        }
    }
    l7_fetch_rearm(s);
    l7_update_irq(s);
    if (rx) {
        l7_rx_kick(s);
    }
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
    memset(s->fifo_off_since, 0, sizeof(s->fifo_off_since));
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

