/*
 * QEMU model of the Microchip LAN7430: QOM: counters (JSON) and runtime-settable properties.
 *
 * A compilation unit of the model: the shared state and the functions other
 * units call are declared in lan7430-int.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "lan7430-int.h"
#include "trace.h"

/* ------------------------------------------------------------------------ */
/* counters (QOM property "counters", JSON)                                  */

static const struct {
    hwaddr off;
    const char *name;
} l7_reg_names[] = {
    { L7_ID_REV, "ID_REV" }, { L7_HW_CFG, "HW_CFG" }, { L7_PMT_CTL, "PMT_CTL" },
    { L7_MAC_CR, "MAC_CR" }, { L7_MAC_RX, "MAC_RX" }, { L7_MAC_TX, "MAC_TX" },
    { L7_MAC_MII_ACC, "MAC_MII_ACC" }, { L7_MAC_MII_DATA, "MAC_MII_DATA" },
    { L7_RFE_CTL, "RFE_CTL" },
    { L7_INT_STS, "INT_STS" }, { L7_INT_SET, "INT_SET" },
    { L7_INT_EN_SET, "INT_EN_SET" }, { L7_INT_EN_CLR, "INT_EN_CLR" },
    { L7_INT_STS_R2C, "INT_STS_R2C" },
    { L7_INT_VEC_EN_SET, "INT_VEC_EN_SET" },
    { L7_INT_VEC_EN_CLR, "INT_VEC_EN_CLR" },
    { L7_INT_VEC_EN_AUTO_CLR, "INT_VEC_EN_AUTO_CLR" },
    { L7_INT_VEC_MAP0, "INT_VEC_MAP0" }, { L7_INT_VEC_MAP1, "INT_VEC_MAP1" },
    { L7_INT_VEC_MAP2, "INT_VEC_MAP2" },
    { L7_DMAC_CMD, "DMAC_CMD" }, { L7_DMAC_INT_STS, "DMAC_INT_STS" },
    { L7_DMAC_INT_EN_SET, "DMAC_INT_EN_SET" },
    { L7_DMAC_INT_EN_CLR, "DMAC_INT_EN_CLR" },
    { L7_RX_TAIL(0), "RX_TAIL0" }, { L7_RX_TAIL(1), "RX_TAIL1" },
    { L7_RX_TAIL(2), "RX_TAIL2" }, { L7_RX_TAIL(3), "RX_TAIL3" },
    { L7_RX_HEAD(0), "RX_HEAD0" }, { L7_RX_HEAD(1), "RX_HEAD1" },
    { L7_RX_HEAD(2), "RX_HEAD2" }, { L7_RX_HEAD(3), "RX_HEAD3" },
    { L7_TX_TAIL(0), "TX_TAIL0" }, { L7_TX_HEAD(0), "TX_HEAD0" },
    { L7_PTP_CMD_CTL, "PTP_CMD_CTL" },
};

static const char *l7_reg_name(hwaddr off)
{
    int i;

    for (i = 0; i < ARRAY_SIZE(l7_reg_names); i++) {
        if (l7_reg_names[i].off == off) {
            return l7_reg_names[i].name;
        }
    }
    return NULL;
}

/* [v0,v1,...] */
static void l7_json_list(GString *g, const uint64_t *v, int n)
{
    int i;

    g_string_append_c(g, '[');
    for (i = 0; i < n; i++) {
        g_string_append_printf(g, "%s%" PRIu64, i ? "," : "", v[i]);
    }
    g_string_append_c(g, ']');
}

static void l7_json_arr(GString *g, const char *name, const uint64_t *v, int n)
{
    g_string_append_printf(g, "\"%s\":", name);
    l7_json_list(g, v, n);
    g_string_append_c(g, ',');
}

/* XON frames, frames after XOFF, virtual time the link partner was held
 * (the current pause included) */
static void l7_json_peer_pause(GString *g, Lan7430State *s)
{
    int64_t ns = s->cnt.peer_paused_ns;

    if (s->peer_hold_until) {
        ns += qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - s->peer_hold_start;
    }
    g_string_append_printf(g, "\"tx_xon_frames\":%" PRIu64 ","
                           "\"rx_frames_after_xoff\":%" PRIu64 ","
                           "\"peer_paused_ns\":%" PRId64 ",",
                           s->cnt.tx_xon_frames, s->cnt.rx_frames_after_xoff,
                           ns);
}

/* rx_fifo_off_ns, an off period still running included */
static void l7_json_fifo_off(GString *g, Lan7430State *s)
{
    uint64_t ns[L7_NUM_RX_CH];
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        ns[ch] = s->cnt.rx_fifo_off_ns[ch];
        if (s->fifo_off_since[ch]) {
            ns[ch] += qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) -
                      s->fifo_off_since[ch];
        }
    }
    l7_json_arr(g, "rx_fifo_off_ns", ns, L7_NUM_RX_CH);
}

/*
 * The write-back to interrupt delay per vector: the bins' lower bounds,
 * one histogram per vector, and per vector the frames, their delays' sum
 * and largest, and the frames left out of the histogram.
 */
static void l7_json_wb_delay(GString *g, Lan7430State *s)
{
    L7Counters *c = &s->cnt;
    uint64_t lower[L7_WB_DELAY_BINS];
    int i;

    for (i = 0; i < L7_WB_DELAY_BINS; i++) {
        lower[i] = l7_wb_delay_bin_lower_us(i);
    }
    l7_json_arr(g, "wb_delay_bin_lower_us", lower, L7_WB_DELAY_BINS);
    g_string_append(g, "\"wb_delay_hist_per_vector\":[");
    for (i = 0; i < s->nvec; i++) {
        if (i) {
            g_string_append_c(g, ',');
        }
        l7_json_list(g, c->wb_delay_hist[i], L7_WB_DELAY_BINS);
    }
    g_string_append(g, "],");
    l7_json_arr(g, "wb_delay_frames", c->wb_delay_frames, s->nvec);
    l7_json_arr(g, "wb_delay_sum_ns", c->wb_delay_sum_ns, s->nvec);
    l7_json_arr(g, "wb_delay_max_ns", c->wb_delay_max_ns, s->nvec);
    l7_json_arr(g, "wb_masked_frames", c->wb_masked_frames, s->nvec);
    l7_json_arr(g, "wb_unreported_frames", c->wb_unreported_frames, s->nvec);
    l7_json_arr(g, "wb_delay_overflow", c->wb_delay_overflow, s->nvec);
}

/*
 * The moderation intervals as written: each INT_MOD_CFG slot's value, its
 * writes and changes, and its last changes as [virtual ns, value], oldest
 * first; each RX channel's last frame write-back and the virtual clock now,
 * so that the time from a burst's last frame to a change is counted.
 */
static void l7_json_int_mod(GString *g, Lan7430State *s)
{
    L7Counters *c = &s->cnt;
    uint64_t cfg[L7_INT_MOD_NUM];
    uint64_t n, k;
    int i;

    for (i = 0; i < L7_INT_MOD_NUM; i++) {
        cfg[i] = s->mod_cfg[i];
    }
    l7_json_arr(g, "int_mod_cfg", cfg, L7_INT_MOD_NUM);
    l7_json_arr(g, "int_mod_writes", c->int_mod_writes, L7_INT_MOD_NUM);
    l7_json_arr(g, "int_mod_changes", c->int_mod_changes, L7_INT_MOD_NUM);
    g_string_append(g, "\"int_mod_log\":[");
    for (i = 0; i < L7_INT_MOD_NUM; i++) {
        n = c->int_mod_changes[i];
        g_string_append(g, i ? ",[" : "[");
        for (k = n > L7_INT_MOD_LOG ? n - L7_INT_MOD_LOG : 0; k < n; k++) {
            g_string_append_printf(g, "%s[%" PRIu64 ",%" PRIu64 "]",
                                   k + L7_INT_MOD_LOG == n || !k ? "" : ",",
                                   c->int_mod_log_ns[i][k % L7_INT_MOD_LOG],
                                   c->int_mod_log_val[i][k % L7_INT_MOD_LOG]);
        }
        g_string_append_c(g, ']');
    }
    g_string_append(g, "],");
    l7_json_arr(g, "rx_last_wb_ns", c->rx_last_wb_ns, L7_NUM_RX_CH);
    g_string_append_printf(g, "\"vclock_ns\":%" PRId64 ",",
                           qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
}

/* "name":{"names[0]":v[0],...}, */
static void l7_json_named(GString *g, const char *name,
                          const char *const *names, const uint64_t *v, int n)
{
    int i;

    g_string_append_printf(g, "\"%s\":{", name);
    for (i = 0; i < n; i++) {
        g_string_append_printf(g, "%s\"%s\":%" PRIu64, i ? "," : "",
                               names[i], v[i]);
    }
    g_string_append(g, "},");
}

char *lan7430_get_counters(Object *obj, Error **errp)
{
    Lan7430State *s = LAN7430(obj);
    L7Counters *c = &s->cnt;
    GString *g = g_string_new("{\"mmio\":{");
    bool first = true;
    int i;

    /* every register ever touched, by name where known */
    for (i = 0; i < L7_NREGS; i++) {
        const char *n;
        char buf[16];

        if (!c->reg_reads[i] && !c->reg_writes[i] && !l7_reg_name(i * 4)) {
            continue;
        }
        n = l7_reg_name(i * 4);
        if (!n) {
            snprintf(buf, sizeof(buf), "0x%03x", i * 4);
            n = buf;
        }
        g_string_append_printf(g, "%s\"%s\":{\"r\":%" PRIu64 ",\"w\":%" PRIu64
                               "}", first ? "" : ",", n, c->reg_reads[i],
                               c->reg_writes[i]);
        first = false;
    }
    g_string_append(g, "},");
    l7_json_arr(g, "irq_per_vector", c->irq_vec, s->nvec);
    l7_json_arr(g, "rx_desc_consumed", c->rx_desc_consumed, L7_NUM_RX_CH);
    l7_json_arr(g, "rx_desc_written", c->rx_desc_written, L7_NUM_RX_CH);
    l7_json_arr(g, "rx_head_writebacks", c->rx_head_wb, L7_NUM_RX_CH);
    l7_json_arr(g, "rx_frames_per_channel", c->rx_frames_ch, L7_NUM_RX_CH);
    l7_json_arr(g, "irq_spurious_per_vector", c->irq_spurious, s->nvec);
    l7_json_arr(g, "rx_fifo_queued", c->rx_fifo_queued, L7_NUM_RX_CH);
    l7_json_arr(g, "rx_wb_flushes", c->rx_wb_flushes, L7_NUM_RX_CH);
    l7_json_arr(g, "rx_fifo_overflow", c->rx_fifo_overflow, L7_NUM_RX_CH);
    l7_json_arr(g, "rx_fifo_peak_bytes", c->rx_fifo_peak_bytes, L7_NUM_RX_CH);
    g_string_append(g, "\"rx_fifo_bytes\":[");
    for (i = 0; i < L7_NUM_RX_CH; i++) {
        g_string_append_printf(g, "%s%u", i ? "," : "", s->rxf[i].used);
    }
    g_string_append(g, "],");
    l7_json_wb_delay(g, s);
    l7_json_int_mod(g, s);
    l7_json_named(g, "async_started", l7_async_names, c->async_started,
                  L7A_KINDS);
    l7_json_named(g, "async_busy_reads", l7_async_names,
                  c->async_busy_reads, L7A_KINDS);
    l7_json_named(g, "async_wait_ns", l7_async_names, c->async_wait_ns,
                  L7A_KINDS);
    l7_json_named(g, "async_wait_max_ns", l7_async_names,
                  c->async_wait_max_ns, L7A_KINDS);
    l7_json_named(g, "rx_wb_flush_why", l7_batch_why, c->rx_wb_flush_why,
                  L7B_NUM);
    l7_json_named(g, "tx_wb_flush_why", l7_batch_why, c->tx_wb_flush_why,
                  L7B_NUM);
    l7_json_named(g, "fault_fired", l7_fault_names, c->fault_fired, L7F_NUM);
    l7_json_named(g, "quirk_applied", l7_quirk_names, c->quirk_applied,
                  L7Q_NUM);
    l7_json_named(g, "desc_errors_by_kind", l7_desc_err_names,
                  c->desc_err_kind, L7DE_NUM);
#define J(f) g_string_append_printf(g, "\"%s\":%" PRIu64 ",", #f, c->f)
    J(irq_intx_assert);
    J(irq_moderated);
    J(tx_desc_consumed);
    g_string_append_printf(g, "\"tx_head_writebacks\":%" PRIu64 ",",
                           c->tx_head_wb);
    J(dma_desc_read_bytes);
    J(dma_desc_write_bytes);
    J(dma_data_read_bytes);
    J(dma_data_write_bytes);
    J(rx_frames);
    J(rx_bytes);
    J(tx_frames);
    J(tx_bytes);
    J(tx_tso_frames);
    J(tx_tso_segments);
    J(tx_csum_offload);
    J(rx_no_desc_stalls);
    J(rx_fifo_holds);
    J(rx_drop_no_desc);
    J(rx_drop_size);
    J(rx_drop_filter);
    J(rx_drop_disabled);
    J(tx_drop_link_down);
    J(tx_bad_frames);
    J(tx_backpressure);
    J(rx_csum_verified);
    J(rx_csum_errors);
    J(rx_csum_unchecked);
    J(rx_pace_holds);
    J(tx_pace_holds);
    J(rx_wire_bytes);
    J(tx_wire_bytes);
    J(rx_fault_holds);
    J(rx_fifo_flushed);
    J(rx_drop_fifo_reset);
    J(rx_swr_fifo_enabled);
    J(tx_pause_frames);
    J(rx_pause_holds);
    J(rx_pause_frames);
    J(tx_pause_delayed);
    J(desc_tail_errors);
    J(desc_errors);
    J(rx_wb_batched_desc);
    J(tx_wb_flushes);
    J(tx_wb_batched_desc);
    J(wb_late_writes);
    J(wb_discarded);
    J(wb_freed_ring_writes);
    J(dma_errors);
    J(strict_dma_errors);
    J(desc_fetch_delayed);
    J(rx_dma_timed_frames);
    J(rx_dma_wait_ns);
    J(rx_dma_wait_max_ns);
    J(dma_coal_holds);
    J(mac_fse_refused);
#undef J
    {
        static const char *const why[4] = {
            "threshold", "timer", "csr", "interrupt",
        };
        l7_json_named(g, "dma_coal_exit_why", why, c->dma_coal_exit_why, 4);
    }
    g_string_append_printf(g, "\"dma_coal_idle\":%d,", s->coal_idle);
    g_string_append_printf(g, "\"strict_dma_failed\":%d,", s->strict_failed);
    l7_json_peer_pause(g, s);
    l7_json_fifo_off(g, s);
    g_string_append_printf(g, "\"wb_at_stop\":%u,", s->wb_at_stop);
    g_string_append_printf(g, "\"rx_fifo_kib\":%u,", s->rx_fifo_kib);
    g_string_append_printf(g, "\"rate_mbps\":%u,", s->rate_mbps);
    g_string_append_printf(g, "\"rate_burst_us\":%u,", s->rate_burst_us);
    g_string_append_printf(g, "\"rate_catchup_us\":%u,", s->rate_catchup_us);
    /* the wire meter's largest excess in bits, rounded up */
    g_string_append_printf(g, "\"tx_wire_excess_max_bits\":%" PRId64 ",",
                           DIV_ROUND_UP(s->tx_meter.peak, 1000));
    g_string_append_printf(g, "\"rx_wire_excess_max_bits\":%" PRId64 ",",
                           DIV_ROUND_UP(s->rx_meter.peak, 1000));
    g_string_append_printf(g, "\"int_mod_unit_ns\":%u}", s->int_mod_unit_ns);
    return g_string_free(g, false);
}

void lan7430_set_reset_counters(Object *obj, bool value, Error **errp)
{
    Lan7430State *s = LAN7430(obj);

    if (value) {
        memset(&s->cnt, 0, sizeof(s->cnt));
        l7_wb_delay_clear(s);
        if (s->peer_hold_until) {
            s->peer_hold_start = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
        }
        /* the meters go on measuring the schedule, their peaks restart */
        s->tx_meter.peak = 0;
        s->rx_meter.peak = 0;
    }
}

/* ------------------------------------------------------------------------ */
/* runtime-settable properties: rate, faults                                 */

static void l7_rate_changed(Lan7430State *s)
{
    /*
     * forget the old schedule; the new rate (rate-burst-us,
     * rate-catchup-us) applies from now on, to the frame waiting in the TX
     * FIFO too: it is the first of the new schedule
     */
    s->tx_wire_free = 0;
    s->rx_wire_free = 0;
    s->tx_backlog = false;
    s->rx_backlog = false;
    s->rx_reserved = false;
    s->rx_mac_finishing = false;        /* no frame booked any more */
    s->rx_dma_finishing = 0;
    s->tx_held_due = 0;
    if (s->tx_held && s->rate_mbps) {
        s->tx_held_ns = l7_tx_chain_ns(s, s->txbuf, s->tx_held_len,
                                       s->tx_held_lso, s->tx_held_mss);
        s->tx_held_due = l7_wire_book(s, &s->tx_wire_free, false,
                                      s->tx_held_ns);
    }
    l7_meter_start(&s->tx_meter);
    l7_meter_start(&s->rx_meter);
    timer_del(s->tx_pace_timer);
    timer_del(s->rx_pace_timer);
    l7_tx_kick(s);
    l7_update_irq(s);
    l7_rx_kick(s);
}

typedef struct L7PropU32 {
    const char *name;
    size_t off;
    uint32_t def;
    void (*changed)(Lan7430State *s);
    const char *desc;
    uint32_t min, max;          /* the accepted range; max 0: any value */
} L7PropU32;

/* stat-preset: every statistics counter takes the value written */
static void l7_stat_preset_changed(Lan7430State *s)
{
    hwaddr off;

    for (off = L7_STAT_FIRST; off <= L7_STAT_LAST; off += 4) {
        s->regs[off >> 2] = s->stat_preset & l7_stat_mask(s, off);
    }
}

static const L7PropU32 l7_u32_props[] = {
    { "rate", offsetof(Lan7430State, rate_mbps), 1000, l7_rate_changed,
      "wire rate in Mbit/s (per-frame preamble, IFG and FCS included), "
      "both directions; 0 = unpaced" },
    { "rate-burst-us", offsetof(Lan7430State, rate_burst_us), 4000,
      l7_rate_changed,
      "how far (us) frames may run ahead of the paced wire (FIFO)" },
    { "rate-catchup-us", offsetof(Lan7430State, rate_catchup_us), 10000,
      l7_rate_changed, "wire time (us) lost to a late pacing timer that "
      "waiting frames may make up (absorbs timer latency under TCG)" },
    { "rx-fifo-kib", offsetof(Lan7430State, rx_fifo_kib), 32, l7_rx_kick,
      "RX FIFO per channel (KiB); estimate, plausible 12-32: see README" },
    { "peer-pause", offsetof(Lan7430State, peer_pause), 0,
      l7_peer_pause_changed,
      "1 = the link partner honours our pause frames (an XOFF stops it "
      "for FCPT x 512 bit times, an XON restarts it), 0 = it ignores them "
      "(the FIFO overflows)" },
    { "peer-pause-lag-frames", offsetof(Lan7430State, peer_pause_lag), 1,
      NULL, "frames a pausing link partner still sends after our XOFF "
      "(in flight; peer-pause=1)" },
    { "phy-lp-pause", offsetof(Lan7430State, phy_lp_pause), 1, NULL,
      "1 = the PHY's link partner advertises pause (MII reg 5 PAUSE), "
      "0 = neither PAUSE nor ASYM_PAUSE; the driver reads it at its next "
      "link up" },
    { "dma-stop-us", offsetof(Lan7430State, async_us[L7A_DMA_STOP]), 0,
      NULL, "DMAC_CMD STOP_R/STOP_T: fixed time (us) STOP_PENDING lasts "
      "beyond the end of the frame the channel is DMAing (RX: the frame on "
      "the wire for it; none: at once)" },
    { "dma-reset-us", offsetof(Lan7430State, async_us[L7A_DMA_RESET]), 0,
      NULL, "DMAC_CMD SWR/RX_SWR/TX_SWR read 1 this long (us); 0 = done "
      "within the write (a few cycles on silicon)" },
    { "fifo-reset-us", offsetof(Lan7430State, async_us[L7A_FIFO_RESET]), 0,
      NULL, "FCT_RX_CTL/FCT_TX_CTL RESET reads 1 this long (us); RX frames "
      "arriving meanwhile are dropped; 0 = done within the write" },
    { "mac-disable-us", offsetof(Lan7430State, async_us[L7A_MAC_DIS]), 0,
      NULL, "MAC_RX.RXD / MAC_TX.TXD: fixed time (us) after the end of the "
      "frame on the wire when the enable was cleared (none: at once)" },
    { "desc-check", offsetof(Lan7430State, desc_check), 1, NULL,
      "1 = descriptor errors are detected: a tail outside the ring is "
      "refused (DESC_TAIL_ERR), RX OWN clear below the tail at fetch "
      "(DESC_READ_ERR) and TX FS/LS/EXT/length errors stop the channel; "
      "0 = none (tail wrapped, as the old model)" },
    { "rx-wb-batch", offsetof(Lan7430State, rx_wb_batch), 1, NULL,
      "1 = RX descriptor write-backs batched as RX_CFG_A says (WB_THRES, "
      "WB_ON_INT_TMR, WB_SWFLUSH); 0 = every frame at once (old model)" },
    { "tx-wb-batch", offsetof(Lan7430State, tx_wb_batch), 1, NULL,
      "1 = TX head write-back (and TX_IOC) batched as TX_CFG_A says "
      "(HP_WB_THRES, HP_WB_ON_INT_TMR); 0 = after every fetch (old model)" },
    { "wb-at-stop", offsetof(Lan7430State, wb_at_stop), 1, NULL,
      "write-backs pending when a DMA stop completes: 0 = written at the "
      "stop (flushed), 1 = written after it, at the write-back timer (late)"
      },
    { "stat-preset", offsetof(Lan7430State, stat_preset), 0,
      l7_stat_preset_changed, "write V: every statistics counter (STAT_*, "
      "wrapping at its width, stats-counter-bits) reads V (masked to "
      "that width) and counts on from there, e.g. a value near 2^32 to "
      "make the counters wrap soon; reads the last value "
      "written (the device's reset value 0 is not written at realize)" },
    { "quirk-extra-buffer", offsetof(Lan7430State, quirk[L7Q_EXTRA_BUFFER]),
      0, NULL, "every Nth RX frame (0 = off) takes one more descriptor "
      "than its data needs: the last one holds no data and carries LS and "
      "the frame length (the driver's \"more buffers\" comment)" },
    { "quirk-status-every-desc",
      offsetof(Lan7430State, quirk[L7Q_STATUS_EVERY]), 0, NULL,
      "every Nth RX frame (0 = off): status (data1) written on every "
      "descriptor, not only LS (overwrites the buffer address low)" },
    { "quirk-hash-store", offsetof(Lan7430State, quirk[L7Q_HASH_STORE]), 0,
      NULL, "every Nth hashed RX frame (0 = off) with RFE_RSS_CFG "
      "RSS_HASH_STORE: the RSS hash over data2 and data3 of the LS "
      "descriptor (buffer address high, 0)" },
    /* DMA that takes time, and other unknowns stated as ranges: each
     * default is the older model's behaviour (docs/emulator.md says why
     * each unkind end is not the default) */
    { "desc-fetch-ns", offsetof(Lan7430State, desc_fetch_ns), 0, NULL,
      "descriptor fetch latency (ns of virtual time) after an RX/TX tail "
      "write; 0..2000, 0 = within the write", 0, 2000 },
    { "dma-rate", offsetof(Lan7430State, dma_rate), 0, l7_rx_kick,
      "RX DMA rate over the PCIe link in bytes per us (a gen1 x1 link: "
      "250 raw, about 200 effective); 0 = infinite, else 50..4000", 0, 4000 },
    { "wb-latency-ns", offsetof(Lan7430State, wb_latency_ns), 0, l7_rx_kick,
      "RX descriptor write-back latency after the frame's data (ns); "
      "0..2000", 0, 2000 },
    { "dma-coal", offsetof(Lan7430State, dma_coal), 0, l7_rx_kick,
      "1 = DMAC_CFG.COAL_EN holds RX frames in the FIFO as DMAC_COAL_CFG "
      "says (threshold, timer, CSR/interrupt exit); 0 = ignored", 0, 1 },
    { "dma-coal-timer-unit-us",
      offsetof(Lan7430State, dma_coal_timer_unit_us), 1000, NULL,
      "unit of DMAC_COAL_CFG.TIMER_LIMIT (us); 1..1000", 1, 1000 },
    { "dma-coal-thres-unit", offsetof(Lan7430State, dma_coal_thres_unit),
      2048, NULL, "unit of DMAC_COAL_CFG.RX_THRES (bytes of RX FIFO); "
      "64..2048", 64, 2048 },
    { "stats-counter-bits", offsetof(Lan7430State, stats_bits), 32, NULL,
      "width of the frame and error statistics counters: 32, or 20 as "
      "the LAN78xx's (byte and EEE counters stay 32); they wrap there",
      20, 32 },
    { "fse-lock", offsetof(Lan7430State, fse_lock), 0, NULL,
      "1 = a MAC_RX write cannot change FSE while RXEN is set, sets RXEN "
      "with it, or before RXD (AN2948); 0 = FSE always writable", 0, 1 },
    { "fault-wb-delay-us", offsetof(Lan7430State, fault_wb_delay_us), 2000,
      NULL, "delay of the wb-delay-desc/wb-delay-head faults (us)" },
    { "fault-rx-stall-ms", offsetof(Lan7430State, fault_rx_stall_ms), 100,
      NULL, "length of an rx-stall fault (ms)" },
    { "fault-rx-irq-hold-ms", offsetof(Lan7430State, fault_rx_irq_hold_ms),
      2000, NULL, "how long an rx-irq-hold fault holds the RX interrupts "
      "(ms)" },
    { "fault-spurious-irq-vectors", offsetof(Lan7430State, fault_irq_vectors),
      0xFF, NULL, "vectors (bit mask) spurious-irq cycles through" },
    { "fault-spurious-irq-period-us",
      offsetof(Lan7430State, fault_irq_period_us), 1000, NULL,
      "tick of the spurious-irq fault (us)" },
    { "fault-link-flap-period-ms",
      offsetof(Lan7430State, fault_flap_period_ms), 3000, NULL,
      "tick of the link-flap fault (ms)" },
    { "fault-link-flap-down-ms", offsetof(Lan7430State, fault_flap_down_ms),
      1500, NULL, "how long a link-flap keeps the link down (ms)" },
};

static void l7_prop_get_u32(Object *obj, Visitor *v, const char *name,
                            void *opaque, Error **errp)
{
    const L7PropU32 *p = opaque;
    uint32_t *field = (uint32_t *)((uint8_t *)obj + p->off);

    visit_type_uint32(v, name, field, errp);
}

static void l7_prop_set_u32(Object *obj, Visitor *v, const char *name,
                            void *opaque, Error **errp)
{
    const L7PropU32 *p = opaque;
    uint32_t *field = (uint32_t *)((uint8_t *)obj + p->off);
    uint32_t val;

    if (!visit_type_uint32(v, name, &val, errp)) {
        return;
    }
    if (p->max && (val < p->min || val > p->max) &&
        !(val == 0 && p->min == 0)) {
        error_setg(errp, "%s %u: out of range %u..%u", name, val, p->min,
                   p->max);
        return;
    }
    if (p->off == offsetof(Lan7430State, stats_bits) && val != 20 &&
        val != 32) {
        error_setg(errp, "stats-counter-bits %u: 20 or 32", val);
        return;
    }
    if (p->off == offsetof(Lan7430State, dma_rate) && val && val < 50) {
        error_setg(errp, "dma-rate %u: 0 (infinite) or 50..4000", val);
        return;
    }
    *field = val;
    if (p->changed && DEVICE(obj)->realized) {
        p->changed(LAN7430(obj));
    }
}

/* opaque: fault index * 2 + (1 for "-every") */
static void l7_prop_get_fault(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    Lan7430State *s = LAN7430(obj);
    int k = GPOINTER_TO_INT(opaque);
    L7Fault *ft = &s->fault[k / 2];
    uint32_t val = (k & 1) ? ft->every : ft->count;

    visit_type_uint32(v, name, &val, errp);
}

static void l7_prop_set_fault(Object *obj, Visitor *v, const char *name,
                              void *opaque, Error **errp)
{
    Lan7430State *s = LAN7430(obj);
    int k = GPOINTER_TO_INT(opaque), f = k / 2;
    L7Fault *ft = &s->fault[f];
    uint32_t val;

    if (!visit_type_uint32(v, name, &val, errp)) {
        return;
    }
    if (k & 1) {
        ft->every = val;
        ft->seen = 0;
    } else {
        ft->count = val;
    }
    if (!DEVICE(obj)->realized || !val) {
        return;
    }
    /* timer driven faults: the first tick is now */
    if (f == L7F_SPURIOUS_IRQ && !timer_pending(s->fault_irq_timer)) {
        l7_fault_irq_tick(s);
    } else if (f == L7F_LINK_FLAP && !timer_pending(s->flap_tick_timer)) {
        l7_flap_tick(s);
    }
}

bool l7_get_false(Object *obj, Error **errp)
{
    return false;
}

static void l7_set_fault_clear(Object *obj, bool value, Error **errp)
{
    if (value && DEVICE(obj)->realized) {
        l7_fault_clear(LAN7430(obj));
    }
}

void lan7430_instance_init(Object *obj)
{
    Lan7430State *s = LAN7430(obj);
    int i;

    for (i = 0; i < ARRAY_SIZE(l7_u32_props); i++) {
        *(uint32_t *)((uint8_t *)s + l7_u32_props[i].off) =
            l7_u32_props[i].def;
    }
}

void l7_class_add_runtime_props(ObjectClass *klass)
{
    int i;

    for (i = 0; i < ARRAY_SIZE(l7_u32_props); i++) {
        object_class_property_add(klass, l7_u32_props[i].name, "uint32",
                                  l7_prop_get_u32, l7_prop_set_u32, NULL,
                                  (void *)&l7_u32_props[i]);
        object_class_property_set_description(klass, l7_u32_props[i].name,
                                              l7_u32_props[i].desc);
    }
    for (i = 0; i < L7F_NUM; i++) {
        g_autofree char *n = g_strdup_printf("fault-%s", l7_fault_names[i]);
        g_autofree char *e = g_strdup_printf("fault-%s-every",
                                             l7_fault_names[i]);

        object_class_property_add(klass, n, "uint32", l7_prop_get_fault,
                                  l7_prop_set_fault, NULL,
                                  GINT_TO_POINTER(i * 2));
        object_class_property_set_description(klass, n,
            "fault injection: fire on the next N opportunities");
        object_class_property_add(klass, e, "uint32", l7_prop_get_fault,
                                  l7_prop_set_fault, NULL,
                                  GINT_TO_POINTER(i * 2 + 1));
        object_class_property_set_description(klass, e,
            "fault injection: fire on every Nth opportunity (0 = off)");
    }
    object_class_property_add_bool(klass, "fault-clear", l7_get_false,
                                   l7_set_fault_clear);
    object_class_property_set_description(klass, "fault-clear",
        "write true to clear all faults and end those in progress");
}
