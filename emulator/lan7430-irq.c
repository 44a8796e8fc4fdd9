/*
 * QEMU model of the Microchip LAN7430: interrupt controller: sources, vectors, MSI-X/MSI/INTx, moderation.
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
/* interrupts                                                                */

uint32_t l7_int_sts(Lan7430State *s)
{
    uint32_t sts = s->int_sts & ~(L7_INT_BIT_ALL_RX | L7_INT_BIT_ALL_TX |
                                  L7_INT_BIT_DMA_GEN | L7_INT_BIT_MAS);
    uint32_t d = s->dmac_int_sts & s->dmac_int_en;
    int ch;

    if (d & L7_DMAC_INT_ERR) {
        sts |= L7_INT_BIT_DMA_GEN;      /* descriptor errors (H1) */
    }

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (d & L7_DMAC_INT_RXFRM(ch)) {
            sts |= L7_INT_BIT_DMA_RX(ch);
        }
    }
    for (ch = 0; ch < s->ntx; ch++) {
        if (d & L7_DMAC_INT_TX_IOC(ch)) {
            sts |= L7_INT_BIT_DMA_TX(ch);
        }
    }
    if (sts & s->int_en & ~L7_INT_BIT_MAS) {
        sts |= L7_INT_BIT_MAS;
    }
    return sts;
}

/*
 * Vector / moderation slot for one source bit.  INT_VEC_MAP2 and
 * INT_MOD_MAP2 have one nibble per "other" source (Microchip's 2017
 * lan743x.h): FCT 23:20, DMA_GEN 19:16, SW_GP 15:12, 1588 11:8, GPT 7:4,
 * the rest 3:0.  The driver writes 0 (vector 0) and 0x00FFFFFF (none).
 */
unsigned l7_src_nibble(const uint32_t map[3], int bit)
{
    static const int8_t map2_shift[12] = {
        [1] = 4, [2] = 20, [7] = 8, [9] = 12, [10] = 16,
    };

    if (bit >= 24 && bit < 28) {
        return (map[0] >> ((bit - 24) * 4)) & 0xF;
    }
    if (bit >= 16 && bit < 20) {
        return (map[1] >> ((bit - 16) * 4)) & 0xF;
    }
    return (map[2] >> (bit < 12 ? map2_shift[bit] : 0)) & 0xF;
}

/*
 * Moderation of the sources srcs: the longest INTERVAL (13 bits, H1) of
 * the INT_MOD_CFG slots they map to, in ns (int-mod-unit-ns per count);
 * *credit tells whether that slot is in TMODE CREDIT (hold-off) rather
 * than ABS (0, what the driver writes).
 */
static int64_t l7_mod_interval_mode(Lan7430State *s, uint32_t srcs,
                                    bool *credit)
{
    int64_t best = 0;
    int bit;

    *credit = false;
    for (bit = 1; bit < 32; bit++) {
        if (srcs & (1u << bit)) {
            unsigned slot = l7_src_nibble(s->mod_map, bit);
            if (slot < L7_INT_MOD_NUM) {
                uint32_t cfg = s->mod_cfg[slot];
                int64_t v = (int64_t)(cfg & L7_INT_MOD_CFG_INTERVAL_MASK) *
                            s->int_mod_unit_ns;
                if (v > best) {
                    best = v;
                    *credit = cfg & L7_INT_MOD_CFG_TMODE_CREDIT;
                }
            }
        }
    }
    return best;
}

int64_t l7_mod_interval_ns(Lan7430State *s, uint32_t srcs)
{
    bool credit;

    return l7_mod_interval_mode(s, srcs, &credit);
}

/*
 * The write-back of sources srcs happened on their interrupt timer
 * (WB_ON_INT_TMR / HP_WB_ON_INT_TMR): that timer is the ABS timer, which
 * the first frame of the batch started, so its interval is over and the
 * message goes with the write-back instead of a second interval later.
 */
void l7_mod_expired(Lan7430State *s, uint32_t srcs)
{
    int bit;

    for (bit = 1; bit < 32; bit++) {
        if (srcs & (1u << bit)) {
            s->vec_mod_expired[l7_src_vector(s, bit)] = true;
        }
    }
}

/*
 * Is vector v's message held back by moderation now?  ABS: the timer
 * starts when the vector becomes asserted (first event after it was
 * serviced or idle) and the message goes when the interval has expired,
 * so events within the interval share one message.  CREDIT (hold-off): a
 * message goes at once unless the previous one is younger than the
 * interval.
 */
static bool l7_mod_hold(Lan7430State *s, int v, uint32_t srcs)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    bool credit;
    int64_t ival = l7_mod_interval_mode(s, srcs, &credit), due;

    if (!ival) {
        return false;
    }
    if (credit) {
        due = s->vec_last_fire[v] + ival;
    } else if (s->vec_mod_expired[v]) {
        s->vec_mod_expired[v] = false;
        return false;
    } else {
        if (!s->vec_mod_due[v]) {
            s->vec_mod_due[v] = now + ival;
        }
        due = s->vec_mod_due[v];
    }
    if (now >= due) {
        return false;
    }
    if (!timer_pending(s->mod_timer[v])) {
        timer_mod(s->mod_timer[v], due);
        s->cnt.irq_moderated++;
        trace_lan743x_irq_deferred(v, due);
    }
    return true;
}

/*
 * Write-back to interrupt delay, per vector, counted in virtual time.  An
 * RX write-back (a frame, or a batch of them) that finds its vector armed
 * (enabled, its message not yet sent) is reported by the vector's next
 * message: at that message each of its frames adds the time since it was
 * in the ring (its data and descriptors written; a write-back batch that
 * waits for the interrupt timer holds it back before its write-back) to
 * the vector's histogram.  One that finds the vector masked or already
 * signalled is counted in wb_masked_frames (the driver is polling; the
 * frame costs no message of its own).  Frames whose status is cleared, or
 * whose vector is masked, before a message goes are wb_unreported_frames.
 */
uint64_t l7_wb_delay_bin_lower_us(int bin)
{
    if (bin < 4) {
        return bin;
    }
    return (uint64_t)(4 + bin % 4) << (bin / 4 - 1);
}

static int l7_wb_delay_bin(int64_t ns)
{
    uint64_t us = ns > 0 ? ns / 1000 : 0;
    int e, bin;

    if (us < 4) {
        return us;
    }
    e = 63 - clz64(us);
    bin = 4 * (e - 1) + ((us >> (e - 2)) & 3);
    return MIN(bin, L7_WB_DELAY_BINS - 1);
}

/*
 * The sources that may signal now: the enabled ones while the master
 * enable (MAS) is set, RX's not while the rx-irq-hold fault holds them.
 */
static uint32_t l7_int_enabled(Lan7430State *s)
{
    uint32_t en = s->int_en & ~L7_INT_BIT_MAS;

    if (!(s->int_en & L7_INT_BIT_MAS)) {
        return 0;
    }
    if (s->rx_irq_held) {
        en &= ~L7_INT_BIT_ALL_RX;               /* rx-irq-hold fault */
    }
    return en;
}

static int l7_rx_vector(Lan7430State *s, int ch, bool *armed)
{
    PCIDevice *d = PCI_DEVICE(s);
    bool en = l7_int_enabled(s) & L7_INT_BIT_DMA_RX(ch);
    int v;

    if (!msix_enabled(d) && !msi_enabled(d)) {
        *armed = en && !s->intx_level;
        return 0;
    }
    v = l7_src_vector(s, 24 + ch);
    *armed = en && (s->vec_en & (1u << v)) && !(s->vec_asserted & (1u << v));
    return v;
}

static void l7_wb_delay_push(Lan7430State *s, int v, int64_t t)
{
    int i = s->wb_pend_cnt[v];

    if (i == L7_WB_DELAY_PENDING) {
        s->cnt.wb_delay_overflow[v]++;
        return;
    }
    s->wb_pend_t[v][i] = t;
    s->wb_pend_cnt[v] = i + 1;
}

/*
 * frames RX frames of channel ch are written back now; t[i] is when frame i
 * was in the ring (a write-back batch holds frames back), NULL: now
 */
void l7_wb_delay_start(Lan7430State *s, int ch, uint32_t frames,
                       const int64_t *t)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    bool armed;
    int v = l7_rx_vector(s, ch, &armed);
    uint32_t i;

    if (!frames) {
        return;
    }
    if (!armed) {
        s->cnt.wb_masked_frames[v] += frames;
        return;
    }
    for (i = 0; i < frames; i++) {
        /* frames beyond the kept times: the last kept one (earlier) */
        l7_wb_delay_push(s, v, t ? t[MIN(i, L7_WB_DELAY_BATCH - 1)] : now);
    }
}

/* vector v's message went (fired) or its frames went without one */
static void l7_wb_delay_end(Lan7430State *s, int v, bool fired)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    L7Counters *c = &s->cnt;
    int i;

    for (i = 0; i < s->wb_pend_cnt[v]; i++) {
        int64_t d = now - s->wb_pend_t[v][i];

        if (!fired) {
            c->wb_unreported_frames[v]++;
            continue;
        }
        c->wb_delay_hist[v][l7_wb_delay_bin(d)]++;
        c->wb_delay_frames[v]++;
        c->wb_delay_sum_ns[v] += (uint64_t)d;
        c->wb_delay_max_ns[v] = MAX(c->wb_delay_max_ns[v], (uint64_t)d);
    }
    s->wb_pend_cnt[v] = 0;
}

void l7_wb_delay_clear(Lan7430State *s)
{
    memset(s->wb_pend_cnt, 0, sizeof(s->wb_pend_cnt));
}

static void l7_fire_auto_clear(Lan7430State *s, uint32_t srcs)
{
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (srcs & L7_INT_BIT_DMA_RX(ch)) {
            uint32_t c = l7_reg(s, L7_RX_CFG_C(ch));
            if (c & L7_RX_CFG_C_TOP_INT_EN_AUTO_CLR) {
                s->int_en &= ~L7_INT_BIT_DMA_RX(ch);
            }
            if (c & L7_RX_CFG_C_DMA_INT_STS_AUTO_CLR) {
                s->dmac_int_sts &= ~L7_DMAC_INT_RXFRM(ch);
            }
        }
    }
    for (ch = 0; ch < s->ntx; ch++) {
        if (srcs & L7_INT_BIT_DMA_TX(ch)) {
            uint32_t c = l7_reg(s, L7_TX_CFG_C(ch));
            if (c & L7_TX_CFG_C_TOP_INT_EN_AUTO_CLR) {
                s->int_en &= ~L7_INT_BIT_DMA_TX(ch);
            }
            if (c & L7_TX_CFG_C_DMA_INT_EN_AUTO_CLR) {
                s->dmac_int_en &= ~L7_DMAC_INT_TX_IOC(ch);
            }
            if (c & L7_TX_CFG_C_DMA_INT_STS_AUTO_CLR) {
                s->dmac_int_sts &= ~L7_DMAC_INT_TX_IOC(ch);
            }
        }
    }
}

void l7_update_irq(Lan7430State *s)
{
    PCIDevice *d = PCI_DEVICE(s);
    bool msix = msix_enabled(d);
    bool msi = !msix && msi_enabled(d);
    int pass;

    for (pass = 0; pass < 4; pass++) {
        uint32_t sts = l7_int_sts(s);
        uint32_t pending = sts & l7_int_enabled(s);
        uint32_t vec_pending[L7_MAX_VECTORS] = { 0 };
        bool again = false;
        int bit, v;

        for (bit = 1; bit < 32; bit++) {
            if (pending & (1u << bit)) {
                v = l7_src_vector(s, bit);
                vec_pending[v] |= 1u << bit;
            }
        }

        if (!msix && !msi) {
            /* legacy INTx: level, vector enables are not used */
            bool level = pending != 0;
            if (level && !s->intx_level) {
                s->cnt.irq_intx_assert++;
                s->cnt.irq_vec[0]++;
                trace_lan743x_irq(-1, pending);
                l7_wb_delay_end(s, 0, true);
            } else if (!level && s->wb_pend_cnt[0]) {
                l7_wb_delay_end(s, 0, false);
            }
            s->intx_level = level;
            pci_set_irq(d, level);
            return;
        }
        if (s->intx_level) {
            s->intx_level = false;
            pci_set_irq(d, 0);
        }

        for (v = 0; v < s->nvec; v++) {
            uint32_t vbit = 1u << v;
            bool asserted = vec_pending[v] && (s->vec_en & vbit);

            if (!asserted) {
                s->vec_asserted &= ~vbit;
                s->vec_mod_expired[v] = false;
                if (s->wb_pend_cnt[v]) {
                    l7_wb_delay_end(s, v, false);
                }
                if (s->vec_mod_due[v]) {
                    s->vec_mod_due[v] = 0;  /* ABS timer idle again */
                    timer_del(s->mod_timer[v]);
                }
                continue;
            }
            if (s->vec_asserted & vbit) {
                continue;       /* edge already signalled */
            }
            if (l7_mod_hold(s, v, vec_pending[v])) {
                continue;
            }
            /* rising edge: send the message */
            s->vec_asserted |= vbit;
            s->vec_last_fire[v] = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
            s->vec_mod_due[v] = 0;
            s->cnt.irq_vec[v]++;
            trace_lan743x_irq(v, vec_pending[v]);
            l7_wb_delay_end(s, v, true);
            if (s->vec_auto_clr & vbit) {
                s->vec_en &= ~vbit;
            }
            l7_fire_auto_clear(s, vec_pending[v]);
            if (s->coal_idle && (l7_reg(s, L7_DMAC_COAL_CFG) &
                                 L7_DMAC_COAL_CFG_INT_EXIT)) {
                /* an interrupt ends DMA coalescing: after this update */
                s->coal_int = true;
                timer_mod(s->coal_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
            }
            if (msix) {
                if (v < d->msix_entries_nr) {
                    msix_notify(d, v);
                }
            } else {
                unsigned nr = msi_nr_vectors_allocated(d);
                msi_notify(d, v < nr ? v : 0);
            }
            again = true;
        }
        if (!again) {
            return;
        }
    }
}

void l7_mod_timer_cb(void *opaque)
{
    l7_update_irq(opaque);
}
