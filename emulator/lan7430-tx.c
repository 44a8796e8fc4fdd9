/*
 * QEMU model of the Microchip LAN7430: transmit DMA, offloads and TSO.
 *
 * A compilation unit of the model: the shared state and the functions other
 * units call are declared in lan7430-int.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "net/checksum.h"
#include "net/eth.h"
#include "lan7430-int.h"
#include "trace.h"

/* ------------------------------------------------------------------------ */
/* transmit                                                                  */

/*
 * Serve every TX channel, starting at the one after the channel that last
 * fetched a frame (round robin: the MAC and its one-frame TX FIFO are
 * shared, a held frame blocks all channels until the wire takes it).  The
 * LAN743x has one channel, so this is l7_tx_process(s, 0) there.
 */
static bool l7_tx_fifo(Lan7430State *s);

void l7_tx_kick(Lan7430State *s)
{
    int i, first = s->tx_rr;

    /* MAC TX disabled while the held frame was on the wire: it still goes
     * when its time is due (see async) */
    if (s->tx_mac_finishing && !l7_tx_fifo(s)) {
        s->tx_mac_finishing = false;
    }
    for (i = 0; i < s->ntx; i++) {
        l7_tx_process(s, (first + i) % s->ntx);
    }
}

/*
 * The peer queued our frame (its receive side is full).  Like a link
 * partner sending 802.3x pause frames, this stalls the transmit DMA until
 * the queue drains instead of dropping frames.
 */
static void l7_tx_sent_cb(NetClientState *nc, ssize_t len)
{
    Lan7430State *s = qemu_get_nic_opaque(nc);

    /*
     * Called from inside the queue flush, once per queued frame.  Resume
     * from a bottom half, after the flush has drained (or re-blocked) the
     * queue: sending from here would let new frames overtake older frames
     * still in the queue.
     */
    if (s->tx_waiting) {
        qemu_bh_schedule(s->tx_bh);
    }
}

void l7_tx_bh(void *opaque)
{
    Lan7430State *s = opaque;

    if (s->tx_waiting) {
        s->tx_waiting = false;
        l7_tx_kick(s);
        l7_update_irq(s);
    }
}

static void l7_tx_send(Lan7430State *s, uint8_t *p, size_t len)
{
    NetClientState *nc = qemu_get_queue(s->nic);

    if (len < 60) {
        memset(p + len, 0, 60 - len);
        len = 60;
    }
    s->cnt.tx_frames++;
    s->cnt.tx_bytes += len;
    if (s->tx_metering) {
        l7_meter_frame(s, &s->tx_meter, s->tx_meter_now, len,
                       &s->cnt.tx_wire_bytes);
    }
    l7_stat_frame(s, false, p, len + 4);
    if (!l7_link_up(s)) {
        s->cnt.tx_drop_link_down++;
        return;
    }
    if (qemu_send_packet_async(nc, p, len, l7_tx_sent_cb) == 0) {
        if (!s->tx_waiting) {
            s->cnt.tx_backpressure++;
        }
        s->tx_waiting = true;
    }
}

static void l7_tx_tso(Lan7430State *s, uint8_t *p, size_t len, uint32_t mss)
{
    L7Parse r;
    uint8_t *seg = s->segbuf;
    size_t hdr, off, plen;
    uint32_t seq;
    uint16_t ipid = 0;
    uint8_t flags;
    int n = 0;

    l7_parse(p, len, &r);
    if ((!r.v4 && !r.v6) || r.l4proto != IP_PROTO_TCP ||
        r.l4off + 20 > (int)len || mss == 0) {
        s->cnt.tx_bad_frames++;
        trace_lan743x_tx_bad("tso-unparseable", len);
        return;
    }
    hdr = r.l4off + ((p[r.l4off + 12] >> 4) * 4);
    if (hdr > len || hdr > 256) {
        s->cnt.tx_bad_frames++;
        trace_lan743x_tx_bad("tso-header", len);
        return;
    }
    seq = ldl_be_p(p + r.l4off + 4);
    flags = p[r.l4off + 13];
    if (r.v4) {
        ipid = lduw_be_p(p + r.l3off + 4);
    }
    s->cnt.tx_tso_frames++;
    for (off = hdr; off < len || (off == hdr && len == hdr); off += plen) {
        bool last;

        plen = MIN((size_t)mss, len - off);
        last = off + plen >= len;
        memcpy(seg, p, hdr);
        memcpy(seg + hdr, p + off, plen);
        if (r.v4) {
            stw_be_p(seg + r.l3off + 2, hdr - r.l3off + plen);
            stw_be_p(seg + r.l3off + 4, ipid + n);
            l7_ipv4_csum(seg, &r);
        } else {
            stw_be_p(seg + r.l3off + 4, hdr - r.l3off - 40 + plen);
        }
        stl_be_p(seg + r.l4off + 4, seq + (off - hdr));
        seg[r.l4off + 13] = flags;
        if (!last) {
            seg[r.l4off + 13] &= ~(0x01 | 0x08);    /* FIN, PSH */
        }
        if (n > 0) {
            seg[r.l4off + 13] &= ~0x80;             /* CWR */
        }
        l7_l4_csum(seg, hdr + plen, &r);
        l7_tx_send(s, seg, hdr + plen);
        s->cnt.tx_tso_segments++;
        n++;
        if (plen == 0) {
            break;
        }
    }
}

static void l7_tx_frame(Lan7430State *s, uint8_t *p, size_t len, uint32_t d0,
                        bool lso, uint32_t mss)
{
    if (lso) {
        l7_tx_tso(s, p, len, mss);
        trace_lan743x_tx_frame(len, 1, mss);
        return;
    }
    if (d0 & (L7_TXD0_IPE | L7_TXD0_TPE)) {
        L7Parse r;

        l7_parse(p, len, &r);
        if ((d0 & L7_TXD0_IPE) && r.v4) {
            l7_ipv4_csum(p, &r);
        }
        if (d0 & L7_TXD0_TPE) {
            l7_l4_csum(p, len, &r);
        }
        s->cnt.tx_csum_offload++;
    }
    trace_lan743x_tx_frame(len, 0, 0);
    l7_tx_send(s, p, len);
}

/* wire time of a frame as fetched, TSO segments included */
int64_t l7_tx_chain_ns(Lan7430State *s, const uint8_t *p, size_t len,
                       bool lso, uint32_t mss)
{
    L7Parse r;
    size_t hdr, pay;
    int64_t ns = 0;

    if (!lso) {
        return l7_wire_ns(s, len);
    }
    l7_parse(p, len, &r);
    if ((!r.v4 && !r.v6) || r.l4proto != IP_PROTO_TCP ||
        r.l4off + 20 > (int)len || mss == 0) {
        return 0;               /* dropped as bad */
    }
    hdr = r.l4off + ((p[r.l4off + 12] >> 4) * 4);
    if (hdr > len) {
        return 0;
    }
    pay = len - hdr;
    while (pay > mss) {
        ns += l7_wire_ns(s, hdr + mss);
        pay -= mss;
    }
    return ns + l7_wire_ns(s, hdr + pay);
}

/*
 * Paced TX: the fetched frame waits in the FIFO until its wire time is due,
 * then goes to the peer (all TSO segments at once).  Returns true if it is
 * still waiting.
 */
static bool l7_tx_fifo(Lan7430State *s)
{
    int64_t due, now;

    if (!s->tx_held) {
        return false;
    }
    due = s->tx_held_due;
    now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    if (s->rate_mbps && due > now) {
        s->tx_backlog = true;
        if (!timer_pending(s->tx_pace_timer)) {
            s->cnt.tx_pace_holds++;
            trace_lan743x_pace("tx", due - now);
        }
        timer_mod(s->tx_pace_timer, due);
        return true;
    }
    s->tx_held = false;
    /* the whole chain leaves at this one instant (the wire meter) */
    s->tx_metering = s->rate_mbps != 0;
    s->tx_meter_now = now;
    l7_tx_frame(s, s->txbuf, s->tx_held_len, s->tx_held_d0, s->tx_held_lso,
                s->tx_held_mss);
    s->tx_metering = false;
    return false;
}

static bool l7_tx_ready(Lan7430State *s, int ch)
{
    return (s->dmac_run & L7_DMAC_CMD_START_T(ch)) &&
           !(s->dmac_stop & L7_DMAC_CMD_STOP_T(ch)) &&
           (s->fct_tx_en & (1u << (28 + ch))) &&
           (s->mac_tx & L7_MAC_TX_TXEN) &&
           (l7_reg(s, L7_TX_CFG_B(ch)) & L7_TX_CFG_B_RING_LEN_MASK) > 1;
}

/*
 * TX head write-back batching (property tx-wb-batch, default 1; 0 = the
 * head written back and TX_IOC raised after every fetch, the older model).
 * TX_CFG_A as the driver programs it: the head is written back (and
 * TX_IOC set if a completed frame had IOC) once HP_WB_THRES (3:0)
 * descriptors have completed since the last write-back; with
 * HP_WB_ON_INT_TMR (30) when the channel's interrupt moderation interval
 * has elapsed since the first pending completion, whichever comes first.
 * Assumptions: the threshold counts descriptors (as RX WB_THRES);
 * TMR_HPWB_SEL (29:28, the driver selects IOC) is not modelled: the
 * driver sets IOC on the frames it wants completions for, and the model
 * arms the timer for any pending completion; without the timer bit, or
 * with a zero interval, the head is written back at once.  Stops: as RX
 * (wb-at-stop), resets discard.
 */
static bool l7_tx_wb_batched(Lan7430State *s, int ch)
{
    return s->tx_wb_batch &&
           (l7_reg(s, L7_TX_CFG_A(ch)) & L7_TX_CFG_A_HP_WB_THRES_MASK) > 1;
}

static void l7_tx_batch_rearm(Lan7430State *s)
{
    int64_t next = INT64_MAX;
    int ch;

    for (ch = 0; ch < s->ntx; ch++) {
        if (s->txb_due[ch]) {
            next = MIN(next, s->txb_due[ch]);
        }
    }
    if (next == INT64_MAX) {
        timer_del(s->txb_timer);
    } else {
        timer_mod(s->txb_timer, next);
    }
}

/* write back channel ch's pending head, then TX_IOC */
static void l7_tx_batch_flush(Lan7430State *s, int ch, int why)
{
    L7WbPending *b = &s->txb[ch];

    if (!b->active) {
        return;
    }
    if (b->head_en) {
        uint32_t h = cpu_to_le32(b->head_idx);

        l7_dma_write(s, b->head_addr, &h, 4, true);
        s->cnt.tx_head_wb++;
    }
    l7_wb_written(s, b, s->tx_ring_gen[ch], 1u << (8 + ch), "tx", ch);
    trace_lan743x_tx_wb_flush(ch, s->txb_descs[ch], l7_batch_why[why]);
    s->cnt.tx_wb_flushes++;
    s->cnt.tx_wb_flush_why[why]++;
    b->active = false;
    s->txb_descs[ch] = 0;
    if (s->txb_due[ch]) {
        s->txb_due[ch] = 0;
        l7_tx_batch_rearm(s);
    }
    if (s->txb_ioc[ch]) {
        s->txb_ioc[ch] = false;
        s->dmac_int_sts |= L7_DMAC_INT_TX_IOC(ch);
        l7_update_irq(s);
    }
}

/* channel reset: the pending head write-back is void */
void l7_tx_batch_discard(Lan7430State *s, int ch)
{
    if (s->txb[ch].active) {
        s->cnt.wb_discarded++;
    }
    s->wb_late &= ~(1u << (8 + ch));
    s->txb[ch].active = false;
    s->txb_descs[ch] = 0;
    s->txb_ioc[ch] = false;
    if (s->txb_due[ch] && s->txb_timer) {
        s->txb_due[ch] = 0;
        l7_tx_batch_rearm(s);
    }
}

/* the head write-back and IOC of one frame fetch, as before batching */
static void l7_tx_head_wb_now(Lan7430State *s, int ch, bool ioc)
{
    if (l7_reg(s, L7_TX_CFG_A(ch)) & L7_TX_CFG_A_HP_WB_EN) {
        uint32_t h = cpu_to_le32(s->tx_head[ch]);
        uint64_t wb = l7_addr64(s, L7_TX_HEAD_WB_ADDRH(ch),
                                L7_TX_HEAD_WB_ADDRL(ch));
        l7_dma_write(s, wb, &h, 4, true);
        s->cnt.tx_head_wb++;
    }
    if (ioc) {
        s->dmac_int_sts |= L7_DMAC_INT_TX_IOC(ch);
        l7_update_irq(s);
    }
}

/* ndesc descriptors of channel ch completed (fetched into the TX FIFO) */
static void l7_tx_completed(Lan7430State *s, int ch, int ndesc, bool ioc)
{
    uint32_t cfg = l7_reg(s, L7_TX_CFG_A(ch));
    uint32_t thres = cfg & L7_TX_CFG_A_HP_WB_THRES_MASK;
    int64_t ivl = l7_mod_interval_ns(s, L7_INT_BIT_DMA_TX(ch));
    L7WbPending *b = &s->txb[ch];

    if (!l7_tx_wb_batched(s, ch)) {
        l7_tx_batch_flush(s, ch, L7B_ORDER);
        l7_tx_head_wb_now(s, ch, ioc);
        return;
    }
    if (b->active && b->gen != s->tx_ring_gen[ch]) {
        l7_tx_batch_flush(s, ch, L7B_FULL);     /* an old ring's */
    }
    if (!b->active) {
        b->active = true;
        b->gen = s->tx_ring_gen[ch];
        b->head_en = cfg & L7_TX_CFG_A_HP_WB_EN;
        b->head_addr = l7_addr64(s, L7_TX_HEAD_WB_ADDRH(ch),
                                 L7_TX_HEAD_WB_ADDRL(ch));
    }
    b->head_idx = s->tx_head[ch];
    s->txb_descs[ch] += ndesc;
    s->txb_ioc[ch] |= ioc;
    s->cnt.tx_wb_batched_desc += ndesc;
    if (s->txb_descs[ch] >= thres) {
        l7_tx_batch_flush(s, ch, L7B_THRES);
    } else if (!(cfg & L7_TX_CFG_A_HP_WB_ON_INT_TMR) || !ivl) {
        l7_tx_batch_flush(s, ch, L7B_TIMER);
    } else if (!s->txb_due[ch]) {
        s->txb_due[ch] = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + ivl;
        l7_tx_batch_rearm(s);
    }
}

void l7_tx_batch_timer_cb(void *opaque)
{
    Lan7430State *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int ch;

    for (ch = 0; ch < s->ntx; ch++) {
        if (s->txb_due[ch] && s->txb_due[ch] <= now) {
            s->txb_due[ch] = 0;
            l7_mod_expired(s, L7_INT_BIT_DMA_TX(ch));
            l7_tx_batch_flush(s, ch, L7B_TIMER);
        }
    }
    l7_tx_batch_rearm(s);
}

/* channel ch's stop completed: as l7_rx_batch_stop */
void l7_tx_batch_stop(Lan7430State *s, int ch)
{
    int64_t ivl = l7_mod_interval_ns(s, L7_INT_BIT_DMA_TX(ch));

    if (!s->txb[ch].active) {
        return;
    }
    if (!s->wb_at_stop) {
        l7_tx_batch_flush(s, ch, L7B_STOP);
        return;
    }
    s->wb_late |= 1u << (8 + ch);
    if (!s->txb_due[ch]) {
        s->txb_due[ch] = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                         MAX(ivl, SCALE_US);
        l7_tx_batch_rearm(s);
    }
}

/*
 * TX descriptor sequencing as the DMA fetches it (desc-check): a frame is
 * data descriptors from FS to LS, none of them empty; a data descriptor
 * with EXT is followed by one extension descriptor (the driver's TSO
 * layout, after the LS descriptor when the skb is linear); FS inside a
 * frame, an extension descriptor where data was due or a frame longer
 * than the model's FIFO are errors (DMAC_TX_ERR_STS bits from Microchip's
 * 2017 lan743x.h).
 */
typedef struct L7TxSeq {
    bool in_frame;              /* FS seen */
    bool ext_due;               /* the previous data descriptor had EXT */
    size_t len;
} L7TxSeq;

/* the error kind of the next descriptor d0, or -1 if it fits */
static int l7_tx_seq_kind(L7TxSeq *q, uint32_t d0)
{
    uint32_t blen = d0 & L7_TXD0_BUF_LEN_MASK;

    if (q->ext_due) {
        if ((d0 & L7_TXD0_DTYPE_MASK) != L7_TXD0_DTYPE_EXT) {
            return L7DE_TX_EXT_MISSING;
        }
        q->ext_due = false;
        return -1;
    }
    if ((d0 & L7_TXD0_DTYPE_MASK) != L7_TXD0_DTYPE_DATA) {
        return L7DE_TX_DATA_MISSING;
    }
    if (!(d0 & L7_TXD0_FS) != q->in_frame) {
        return q->in_frame ? L7DE_TX_EXTRAFS : L7DE_TX_NOFS;
    }
    q->in_frame = true;
    q->len += blen;
    if (!blen || q->len > L7_TXBUF_MAX) {
        return L7DE_TX_LEN;
    }
    q->ext_due = d0 & L7_TXD0_EXT;
    return -1;
}

static bool l7_tx_seq_ok(Lan7430State *s, int ch, L7TxSeq *q, uint32_t d0,
                         uint32_t idx)
{
    int kind = s->desc_check ? l7_tx_seq_kind(q, d0) : -1;

    if (kind >= 0) {
        l7_desc_error(s, true, ch, kind, idx);
    }
    return kind < 0;
}

void l7_tx_process(Lan7430State *s, int ch)
{
    PCIDevice *pd = PCI_DEVICE(s);
    uint32_t ring = l7_reg(s, L7_TX_CFG_B(ch)) & L7_TX_CFG_B_RING_LEN_MASK;
    uint64_t base = l7_addr64(s, L7_TX_BASE_ADDRH(ch), L7_TX_BASE_ADDRL(ch));
    unsigned sp = l7_desc_space(s);
    bool any = false, ioc_any = false;
    int budget = 4096, ndone = 0;

    if (!l7_tx_ready(s, ch) || !(pd->config[PCI_COMMAND] & PCI_COMMAND_MASTER)) {
        return;
    }
    if (l7_tx_fifo(s)) {
        return;
    }
    while (s->tx_head[ch] % ring != s->tx_tail[ch] % ring && budget-- > 0 &&
           !s->tx_waiting) {
        uint32_t idx = s->tx_head[ch] % ring, tail = s->tx_tail[ch] % ring;
        uint32_t first_d0 = 0, mss = 0;
        size_t len = 0;
        bool first = true, lso = false, ioc = false, done = false;
        bool ext_follows_last = false, overflow = false;
        L7TxSeq seq = { 0 };
        int nd = 0;

        if (s->tx_held) {
            break;              /* the FIFO is full until the wire is */
        }

        while (!done) {
            uint32_t d[4], d0;

            if (idx == tail || nd >= (int)ring) {
                /* frame not complete yet: wait for more descriptors */
                goto out;
            }
            l7_dma_read(s, base + (uint64_t)idx * sp, d, 16, true);
            d0 = le32_to_cpu(d[0]);
            if (!l7_tx_seq_ok(s, ch, &seq, d0, idx)) {
                goto out;       /* the channel stopped at this frame */
            }
            nd++;
            idx = (idx + 1) % ring;
            if ((d0 & L7_TXD0_DTYPE_MASK) == L7_TXD0_DTYPE_EXT) {
                if (d0 & L7_TXD0_EXT_LSO) {
                    lso = true;
                }
                if (d0 & L7_TXD0_IOC) {
                    ioc = true;
                }
                if (ext_follows_last) {
                    done = true;
                }
                continue;
            }
            if (first) {
                first_d0 = d0;
                mss = (le32_to_cpu(d[3]) & L7_TXD3_MSS_MASK) >> L7_TXD3_MSS_SHIFT;
                first = false;
            }
            if (d0 & L7_TXD0_IOC) {
                ioc = true;
            }
            {
                uint32_t blen = d0 & L7_TXD0_BUF_LEN_MASK;
                uint64_t a = ((uint64_t)le32_to_cpu(d[2]) << 32) |
                             le32_to_cpu(d[1]);
                if (len + blen > L7_TXBUF_MAX) {
                    overflow = true;
                } else if (blen) {
                    l7_dma_read(s, a, s->txbuf + len, blen, false);
                    len += blen;
                }
            }
            if (d0 & L7_TXD0_LS) {
                if (d0 & L7_TXD0_EXT) {
                    ext_follows_last = true;
                } else {
                    done = true;
                }
            }
        }
        s->tx_head[ch] = idx;
        s->cnt.tx_desc_consumed += nd;
        ndone += nd;
        s->tx_rr = (ch + 1) % s->ntx;
        any = true;
        if (overflow || len == 0) {
            s->cnt.tx_bad_frames++;
            trace_lan743x_tx_bad("overflow-or-empty", len);
        } else if (s->rate_mbps) {
            if (s->tx_pause_until > s->tx_wire_free &&
                s->tx_pause_until > qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL)) {
                /* the partner's PAUSE holds the wire (l7_rx_pause_frame) */
                s->tx_wire_free = s->tx_pause_until;
                s->cnt.tx_pause_delayed++;
            }
            s->tx_held = true;
            s->tx_held_ch = ch;
            s->tx_held_ns = l7_tx_chain_ns(s, s->txbuf, len, lso, mss);
            s->tx_held_due = l7_wire_book(s, &s->tx_wire_free, s->tx_backlog,
                                          s->tx_held_ns);
            s->tx_held_len = len;
            s->tx_held_d0 = first_d0;
            s->tx_held_lso = lso;
            s->tx_held_mss = mss;
            l7_tx_fifo(s);
        } else {
            l7_tx_frame(s, s->txbuf, len, first_d0, lso, mss);
        }
        if (ioc) {
            ioc_any = true;
        }
    }
    if (s->tx_head[ch] % ring == s->tx_tail[ch] % ring && !s->tx_held) {
        s->tx_backlog = false;  /* ring drained: nothing waits any more */
    }
out:
    if (any) {
        l7_tx_completed(s, ch, ndone, ioc_any);
    }
}
