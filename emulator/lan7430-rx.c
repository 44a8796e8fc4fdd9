/*
 * QEMU model of the Microchip LAN7430: receive: parsing/checksums, statistics, MAC and filter, RSS, per-channel RX FIFO and flow control, RX DMA and write-back batching.
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

const char *const l7_quirk_names[L7Q_NUM] = {
    [L7Q_EXTRA_BUFFER] = "extra-buffer",
    [L7Q_STATUS_EVERY] = "status-every-desc",
    [L7Q_HASH_STORE] = "hash-store",
};
#include <zlib.h>

/* ------------------------------------------------------------------------ */
/* frame parsing / checksums                                                 */

void l7_parse(const uint8_t *p, size_t len, L7Parse *r)
{
    size_t off = 12;
    uint16_t et;

    memset(r, 0, sizeof(*r));
    r->l4proto = -1;
    if (len < 14) {
        return;
    }
    et = lduw_be_p(p + off);
    while ((et == 0x8100 || et == 0x88A8) && off + 6 <= len) {
        off += 4;
        et = lduw_be_p(p + off);
    }
    off += 2;
    r->l3off = off;
    if (et == 0x0800 && len >= off + 20) {
        int ihl = (p[off] & 0xF) * 4;
        if ((p[off] >> 4) != 4 || ihl < 20 || len < off + ihl) {
            return;
        }
        r->v4 = true;
        r->frag = (lduw_be_p(p + off + 6) & 0x3FFF) != 0;
        r->l4proto = p[off + 9];
        r->l4off = off + ihl;
    } else if (et == 0x86DD && len >= off + 40) {
        uint8_t nh = p[off + 6];
        size_t o = off + 40;
        int guard = 8;

        r->v6 = true;
        while (guard-- > 0) {
            if (nh == 0 || nh == 43 || nh == 60) {
                if (len < o + 8) {
                    return;
                }
                nh = p[o];
                o += (p[o + 1] + 1) * 8;
            } else if (nh == 44) {
                r->frag = true;
                if (len < o + 8) {
                    return;
                }
                nh = p[o];
                o += 8;
            } else {
                break;
            }
        }
        r->l4proto = nh;
        r->l4off = o;
    }
}

static uint32_t l7_pseudo_sum(const uint8_t *p, const L7Parse *r,
                              uint32_t l4len)
{
    uint32_t sum;

    if (r->v4) {
        sum = net_checksum_add(8, (uint8_t *)p + r->l3off + 12);
    } else {
        sum = net_checksum_add(32, (uint8_t *)p + r->l3off + 8);
    }
    sum += r->l4proto;
    sum += (l4len >> 16) + (l4len & 0xFFFF);
    return sum;
}

void l7_ipv4_csum(uint8_t *p, const L7Parse *r)
{
    uint8_t *ip = p + r->l3off;
    int ihl = (ip[0] & 0xF) * 4;

    stw_be_p(ip + 10, 0);
    stw_be_p(ip + 10, net_checksum_finish(net_checksum_add(ihl, ip)));
}

/* fill in the TCP/UDP checksum of a complete frame */
void l7_l4_csum(uint8_t *p, size_t len, const L7Parse *r)
{
    uint32_t l4len, sum;
    int csoff;
    uint16_t cs;

    if (r->frag || r->l4off == 0 || r->l4off >= (int)len) {
        return;
    }
    if (r->v4) {
        size_t iplen = lduw_be_p(p + r->l3off + 2);
        if (r->l3off + iplen < len) {
            len = r->l3off + iplen;     /* strip ethernet padding */
        }
    } else {
        size_t plen = lduw_be_p(p + r->l3off + 4);
        if (r->l3off + 40 + plen < len) {
            len = r->l3off + 40 + plen;
        }
    }
    if (r->l4proto == IP_PROTO_TCP) {
        csoff = 16;
    } else if (r->l4proto == IP_PROTO_UDP) {
        csoff = 6;
    } else {
        return;
    }
    l4len = len - r->l4off;
    if (l4len < (uint32_t)csoff + 2) {
        return;
    }
    stw_be_p(p + r->l4off + csoff, 0);
    sum = l7_pseudo_sum(p, r, l4len);
    sum += net_checksum_add(l4len, p + r->l4off);
    cs = net_checksum_finish(sum);
    if (r->l4proto == IP_PROTO_UDP && cs == 0) {
        cs = 0xFFFF;
    }
    stw_be_p(p + r->l4off + csoff, cs);
}

/* RX checksum check: returns RX descriptor data1 status bits */
static uint32_t l7_rx_csum_status(Lan7430State *s, const uint8_t *p, size_t len)
{
    uint32_t rfe = l7_reg(s, L7_RFE_CTL);
    uint32_t st = 0;
    L7Parse r;

    if (!(rfe & (L7_RFE_CTL_IP_COE | L7_RFE_CTL_TCPUDP_COE))) {
        return L7_RXD1_ICSM;
    }
    l7_parse(p, len, &r);
    if (!r.v4 && !r.v6) {
        return L7_RXD1_ICSM;
    }
    if (r.v4 && (rfe & L7_RFE_CTL_IP_COE)) {
        int ihl = (p[r.l3off] & 0xF) * 4;
        if (net_checksum_finish(net_checksum_add(ihl, (uint8_t *)p + r.l3off))) {
            st |= L7_RXD1_ICE;
        }
    }
    if ((rfe & L7_RFE_CTL_TCPUDP_COE) && !r.frag &&
        (r.l4proto == IP_PROTO_TCP || r.l4proto == IP_PROTO_UDP) &&
        r.l4off < (int)len) {
        size_t end = len;
        uint32_t l4len, sum;

        if (r.v4) {
            size_t iplen = lduw_be_p(p + r.l3off + 2);
            if (r.l3off + iplen <= len) {
                end = r.l3off + iplen;
            }
        } else {
            size_t plen = lduw_be_p(p + r.l3off + 4);
            if (r.l3off + 40 + plen <= len) {
                end = r.l3off + 40 + plen;
            }
        }
        l4len = end - r.l4off;
        if (r.l4proto == IP_PROTO_UDP && r.v4 && l4len >= 8 &&
            lduw_be_p(p + r.l4off + 6) == 0) {
            return st;          /* UDP without checksum */
        }
        sum = l7_pseudo_sum(p, &r, l4len);
        sum += net_checksum_add(l4len, (uint8_t *)p + r.l4off);
        if (net_checksum_finish(sum) != 0) {
            st |= L7_RXD1_TCE;
        }
    } else {
        st |= L7_RXD1_ICSM;
    }
    return st;
}

/* ------------------------------------------------------------------------ */
/* statistics                                                                */

void l7_stat_frame(Lan7430State *s, bool rx, const uint8_t *p,
                   uint32_t flen)
{
    hwaddr ucf, bcf, mcf, ucb, bcb, mcb, b64, tot;
    int bucket;

    if (rx) {
        ucf = L7_STAT_RX_UNICAST_FRAMES; bcf = L7_STAT_RX_BROADCAST_FRAMES;
        mcf = L7_STAT_RX_MULTICAST_FRAMES; ucb = L7_STAT_RX_UNICAST_BYTES;
        bcb = L7_STAT_RX_BROADCAST_BYTES; mcb = L7_STAT_RX_MULTICAST_BYTES;
        b64 = L7_STAT_RX_64; tot = L7_STAT_RX_TOTAL_FRAMES;
    } else {
        ucf = L7_STAT_TX_UNICAST_FRAMES; bcf = L7_STAT_TX_BROADCAST_FRAMES;
        mcf = L7_STAT_TX_MULTICAST_FRAMES; ucb = L7_STAT_TX_UNICAST_BYTES;
        bcb = L7_STAT_TX_BROADCAST_BYTES; mcb = L7_STAT_TX_MULTICAST_BYTES;
        b64 = L7_STAT_TX_64; tot = L7_STAT_TX_TOTAL_FRAMES;
    }
    if (is_broadcast_ether_addr(p)) {
        l7_stat_add(s, bcf, 1);
        l7_stat_add(s, bcb, flen);
    } else if (is_multicast_ether_addr(p)) {
        l7_stat_add(s, mcf, 1);
        l7_stat_add(s, mcb, flen);
    } else {
        l7_stat_add(s, ucf, 1);
        l7_stat_add(s, ucb, flen);
    }
    if (flen <= 64) {
        bucket = 0;
    } else if (flen <= 127) {
        bucket = 1;
    } else if (flen <= 255) {
        bucket = 2;
    } else if (flen <= 511) {
        bucket = 3;
    } else if (flen <= 1023) {
        bucket = 4;
    } else if (flen <= 1518) {
        bucket = 5;
    } else {
        bucket = 6;
    }
    l7_stat_add(s, b64 + 4 * bucket, 1);
    l7_stat_add(s, tot, 1);
}

/* ------------------------------------------------------------------------ */
/* receive                                                                   */

static bool l7_rx_fifo_enabled(Lan7430State *s, int ch)
{
    return s->fct_rx_en & (1u << (28 + ch));
}

static bool l7_rx_dma_ready(Lan7430State *s, int ch)
{
    /* a channel with a stop pending takes no further frame */
    return (s->dmac_run & L7_DMAC_CMD_START_R(ch)) &&
           (!(s->dmac_stop & L7_DMAC_CMD_STOP_R(ch)) ||
            (s->rx_dma_finishing & (1u << ch))) &&
           (PCI_DEVICE(s)->config[PCI_COMMAND] & PCI_COMMAND_MASTER) &&
           (l7_reg(s, L7_RX_CFG_B(ch)) & L7_RX_CFG_B_RING_LEN_MASK) > 1;
}

/* the receiver takes frames; after RXEN was cleared, only the frame that
 * was on the wire then (rx_mac_finishing, see async) */
bool l7_rx_enabled(Lan7430State *s)
{
    return ((s->mac_rx & L7_MAC_RX_RXEN) || s->rx_mac_finishing) &&
           l7_link_up(s);
}

static bool l7_filter(Lan7430State *s, const uint8_t *p)
{
    uint32_t rfe = l7_reg(s, L7_RFE_CTL);
    uint32_t lo = ldl_le_p(p);
    uint32_t hi = lduw_le_p(p + 4);
    int i;

    if (is_broadcast_ether_addr(p)) {
        return rfe & L7_RFE_CTL_AB;
    }
    if (is_multicast_ether_addr(p)) {
        if (rfe & L7_RFE_CTL_AM) {
            return true;
        }
        if (rfe & L7_RFE_CTL_DA_PERFECT) {
            for (i = 1; i < L7_RFE_NUM_FILT; i++) {
                uint32_t fh = l7_reg(s, L7_RFE_ADDR_FILT_HI(i));
                if ((fh & L7_RFE_ADDR_FILT_HI_VALID) &&
                    (fh & 0xFFFF) == hi &&
                    l7_reg(s, L7_RFE_ADDR_FILT_LO(i)) == lo) {
                    return true;
                }
            }
        }
        if (rfe & L7_RFE_CTL_MCAST_HASH) {
            uint32_t bit = (net_crc32(p, ETH_ALEN) >> 23) & 0x1FF;
            /* hash table lives at DP RAM 128..143 (after the VLAN table) */
            if (s->dp_ram[128 + bit / 32] & (1u << (bit % 32))) {
                return true;
            }
        }
        return false;
    }
    if (rfe & L7_RFE_CTL_AU) {
        return true;
    }
    for (i = 0; i < L7_RFE_NUM_FILT; i++) {
        uint32_t fh = l7_reg(s, L7_RFE_ADDR_FILT_HI(i));
        if ((fh & L7_RFE_ADDR_FILT_HI_VALID) && (fh & 0xFFFF) == hi &&
            l7_reg(s, L7_RFE_ADDR_FILT_LO(i)) == lo) {
            return true;
        }
    }
    return false;
}

static uint32_t l7_toeplitz(Lan7430State *s, const uint8_t *in, int n)
{
    uint8_t key[40];
    uint32_t result = 0, v;
    int i, b, kbit = 32;

    for (i = 0; i < 10; i++) {
        stl_le_p(key + 4 * i, l7_reg(s, L7_RFE_HASH_KEY(i)));
    }
    v = ldl_be_p(key);
    for (i = 0; i < n; i++) {
        for (b = 7; b >= 0; b--) {
            if (in[i] & (1u << b)) {
                result ^= v;
            }
            v <<= 1;
            if (kbit < 320 && (key[kbit / 8] & (0x80 >> (kbit % 8)))) {
                v |= 1;
            }
            kbit++;
        }
    }
    return result;
}

/* the frame's RSS hash in *h; false when RSS_CFG hashes no such frame */
static bool l7_rss_hash(Lan7430State *s, const uint8_t *p, size_t len,
                        uint32_t *h)
{
    uint32_t cfg = l7_reg(s, L7_RFE_RSS_CFG);
    uint8_t in[36];
    int n = 0;
    bool ports = false;
    L7Parse r;

    if (!(cfg & L7_RSS_ENABLE)) {
        return false;
    }
    l7_parse(p, len, &r);
    if (r.v4) {
        bool l4ok = !r.frag && r.l4off + 4 <= (int)len;
        if (l4ok && r.l4proto == IP_PROTO_TCP && (cfg & L7_RSS_TCP_IPV4)) {
            ports = true;
        } else if (l4ok && r.l4proto == IP_PROTO_UDP &&
                   (cfg & L7_RSS_UDP_IPV4)) {
            ports = true;
        } else if (!(cfg & L7_RSS_IPV4)) {
            return false;
        }
        memcpy(in, p + r.l3off + 12, 8);
        n = 8;
    } else if (r.v6) {
        bool l4ok = !r.frag && r.l4off + 4 <= (int)len;
        if (l4ok && r.l4proto == IP_PROTO_TCP &&
            (cfg & (L7_RSS_TCP_IPV6 | L7_RSS_TCP_IPV6_EX))) {
            ports = true;
        } else if (l4ok && r.l4proto == IP_PROTO_UDP &&
                   (cfg & (L7_RSS_UDP_IPV6 | L7_RSS_UDP_IPV6_EX))) {
            ports = true;
        } else if (!(cfg & (L7_RSS_IPV6 | L7_RSS_IPV6_EX))) {
            return false;
        }
        memcpy(in, p + r.l3off + 8, 32);
        n = 32;
    } else {
        return false;
    }
    if (ports) {
        memcpy(in + n, p + r.l4off, 4);
        n += 4;
    }
    *h = l7_toeplitz(s, in, n);
    return true;
}

static int l7_rss_channel(Lan7430State *s, const uint8_t *p, size_t len)
{
    uint32_t cfg = l7_reg(s, L7_RFE_RSS_CFG);
    uint32_t h, indx;
    int bits, idx;

    if (!(cfg & L7_RSS_QUEUE_ENABLE) || !l7_rss_hash(s, p, len, &h)) {
        return 0;
    }
    bits = (cfg & L7_RSS_HASH_BITS_MASK) >> L7_RSS_HASH_BITS_SHIFT;
    idx = h & ((1u << bits) - 1);
    indx = l7_reg(s, L7_RFE_INDX(idx / 4));
    return ((indx >> (8 * (idx % 4))) & 0xFF) % L7_NUM_RX_CH;
}

static bool l7_rx_ts_wanted(Lan7430State *s, int ch, const uint8_t *p,
                            size_t len)
{
    uint32_t b = l7_reg(s, L7_RX_CFG_B(ch));
    L7Parse r;

    if (b & L7_RX_CFG_B_TS_ALL_RX) {
        return true;
    }
    if (!(b & L7_RX_CFG_B_TS_DESCR_EN)) {
        return false;
    }
    /* PTP event messages: L2 (0x88F7) or UDP port 319 */
    l7_parse(p, len, &r);
    if (r.l3off >= 2 && lduw_be_p(p + r.l3off - 2) == 0x88F7) {
        return true;
    }
    return r.l4proto == IP_PROTO_UDP && r.l4off + 4 <= (int)len &&
           lduw_be_p(p + r.l4off + 2) == 319;
}

int64_t l7_ptp_now(Lan7430State *s)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + s->ptp_offset_ns;
}

bool lan7430_can_receive(NetClientState *nc)
{
    Lan7430State *s = qemu_get_nic_opaque(nc);

    return !s->rx_blocked;
}

/* write one 32-bit descriptor word now (defer NULL), or hold it back in
 * defer (wb-delay-desc fault, or a write-back batch) */
static void l7_rx_desc_wr32(Lan7430State *s, uint64_t a, uint32_t v,
                            L7WbPending *defer)
{
    uint32_t le = cpu_to_le32(v);

    if (defer && defer->n < L7_WB_MAX_WRITES) {
        defer->addr[defer->n] = a;
        defer->val[defer->n++] = v;
        return;
    }
    l7_dma_write(s, a, &le, 4, true);
}

/* a batch written back: late (after its channel's stop completed, bit)
 * and/or into a ring the driver has reprogrammed since it was started */
void l7_wb_written(Lan7430State *s, L7WbPending *b, uint32_t gen,
                          uint32_t late_bit, const char *dir, int ch)
{
    if (s->wb_late & late_bit) {
        s->wb_late &= ~late_bit;
        s->cnt.wb_late_writes++;
        l7_strict_dma_fail(s, "write-back after its channel's DMA stop "
                           "completed (the driver may have freed the ring)",
                           ch);
    }
    if (b->gen != gen) {
        s->cnt.wb_freed_ring_writes++;
        trace_lan743x_wb_freed_ring(dir, ch);
        l7_strict_dma_fail(s, "write-back into a ring the driver has "
                           "reprogrammed since (freed ring)", ch);
    }
}

void l7_rx_head_wb(Lan7430State *s, int ch, uint32_t idx)
{
    if (l7_reg(s, L7_RX_CFG_A(ch)) & L7_RX_CFG_A_HP_WB_EN) {
        uint32_t h = cpu_to_le32(idx);
        uint64_t wb = l7_addr64(s, L7_RX_HEAD_WB_ADDRH(ch),
                                L7_RX_HEAD_WB_ADDRL(ch));
        l7_dma_write(s, wb, &h, 4, true);
        s->cnt.rx_head_wb[ch]++;
    }
}

/*
 * FRAMES RX frames of channel CH are written back: their status (RXFRM)
 * and the start of their delays to the interrupt (T as for
 * l7_wb_delay_start); the caller updates the interrupt.
 */
void l7_rx_signal(Lan7430State *s, int ch, uint32_t frames, const int64_t *t)
{
    if (frames) {
        s->cnt.rx_last_wb_ns[ch] = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    }
    l7_wb_delay_start(s, ch, frames, t);
    s->dmac_int_sts |= L7_DMAC_INT_RXFRM(ch);
}

/* QUANTA x 512 bit times at the link rate (1000 Mbit/s when unpaced) */
static int64_t l7_quanta_ns(Lan7430State *s, uint32_t quanta)
{
    uint32_t mbps = s->rate_mbps ? s->rate_mbps : 1000;

    return (int64_t)quanta * 512 * 1000 / mbps;
}

/*
 * A PAUSE frame from the link partner (802.3 annex 31B): to the reserved
 * multicast address 01-80-C2-00-00-01, type 0x8808, opcode 1, of the
 * minimum frame size (64 bytes with the FCS).  The MAC counts it in
 * STAT_RX_PAUSE_FRAMES and consumes it: it does not pass the receive
 * filter to the RX FIFO, so it is in none of the other RX counters (the
 * datasheet does not say whether the multicast, size bucket and total
 * counters count it: the model's are not raised by a frame the driver
 * never sees).  With MAC_FLOW.RX_FCEN its pause time (quanta of 512 bit
 * times at the link rate) holds the transmitter: no frame starts on the
 * wire before it has elapsed; a pause time of 0 (XON) ends a pause.  A
 * frame already booked on the wire goes (802.3: the frame in progress
 * completes).  Unpaced (rate 0) frames take no wire time and a pause
 * holds nothing.  Other MAC control frames (other opcodes) are ordinary
 * frames to the filter.
 */
static bool l7_rx_pause_frame(Lan7430State *s, const uint8_t *f, size_t len)
{
    static const uint8_t da[6] = { 0x01, 0x80, 0xC2, 0x00, 0x00, 0x01 };
    bool fcen = l7_reg(s, L7_MAC_FLOW) & L7_MAC_FLOW_RX_FCEN;
    uint16_t quanta;

    if (len != 60 || memcmp(f, da, 6) != 0 || lduw_be_p(f + 12) != 0x8808 ||
        lduw_be_p(f + 14) != 0x0001) {
        return false;
    }
    quanta = lduw_be_p(f + 16);
    l7_stat_add(s, L7_STAT_RX_PAUSE_FRAMES, 1);
    s->cnt.rx_pause_frames++;
    if (fcen) {
        s->tx_pause_until = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                            l7_quanta_ns(s, quanta);
    }
    trace_lan743x_rx_pause_frame(quanta, fcen);
    return true;
}

/*
 * MAC and receive filter: the RX channel the frame goes to, or -1 when
 * the MAC drops it (counted).
 */
static int l7_rx_mac(Lan7430State *s, const uint8_t *buf, size_t size)
{
    PCIDevice *pd = PCI_DEVICE(s);
    uint8_t *f = s->rxbuf;
    uint32_t flen, maxsz;
    size_t len = size;

    if (!(pd->config[PCI_COMMAND] & PCI_COMMAND_MASTER) || !l7_rx_enabled(s)) {
        s->cnt.rx_drop_disabled++;
        trace_lan743x_rx_drop("disabled", size);
        return -1;
    }
    if (len > L7_RXBUF_MAX - 4) {
        s->cnt.rx_drop_size++;
        l7_stat_add(s, L7_STAT_RX_OVERSIZE, 1);
        trace_lan743x_rx_drop("too-big", size);
        return -1;
    }
    memcpy(f, buf, len);
    if (len < 60) {
        memset(f + len, 0, 60 - len);
        len = 60;
    }
    if (l7_rx_pause_frame(s, f, len)) {
        return -1;
    }
    if (!l7_filter(s, f)) {
        s->cnt.rx_drop_filter++;
        trace_lan743x_rx_drop("filter", size);
        return -1;
    }
    flen = len + 4;
    maxsz = (s->mac_rx & L7_MAC_RX_MAX_MASK) >> L7_MAC_RX_MAX_SHIFT;
    if (lduw_be_p(f + 12) == 0x8100) {
        maxsz += 4;
    }
    if ((s->mac_rx & L7_MAC_RX_FSE) && flen > maxsz) {
        s->cnt.rx_drop_size++;
        l7_stat_add(s, L7_STAT_RX_OVERSIZE, 1);
        trace_lan743x_rx_drop("oversize", size);
        return -1;
    }
    /*
     * The MAC's statistics count the frame now that the MAC has taken it:
     * one the RX FIFO then cannot keep is also in STAT_RX_DROPPED_FRAMES
     * (the datasheet does not say; the counters are the MAC's)
     */
    l7_stat_frame(s, true, f, flen);
    return l7_rss_channel(s, f, len);
}

#define L7_RX_MAX_DESCS     64

/* would quirk q apply to the next frame (every Nth, property quirk-*)? */
static bool l7_quirk_due(Lan7430State *s, int q)
{
    return s->quirk[q] && s->quirk_seen[q] + 1 >= s->quirk[q];
}

/* a frame is an opportunity for quirk q: does it apply (counted)? */
static bool l7_quirk_hit(Lan7430State *s, int q)
{
    bool due = l7_quirk_due(s, q);

    if (due) {
        s->quirk_seen[q] = 0;
        s->cnt.quirk_applied[q]++;
    } else if (s->quirk[q]) {
        s->quirk_seen[q]++;
    }
    return due;
}

/*
 * Layout quirks of one frame's write-back (properties quirk-status-every-
 * desc, quirk-hash-store): status (data1) on the non-last descriptors too,
 * where the driver keeps the buffer address; the RSS hash, when RFE_RSS_CFG
 * RSS_HASH_STORE is set (the driver sets it), over data2 and data3 of the
 * LS descriptor (address high, 0).  Where the silicon stores the hash is
 * not documented: the quirk takes both words the driver wrote.
 */
typedef struct L7RxQuirk {
    bool status_all;
    bool hash;
    uint32_t hash_val;
} L7RxQuirk;

static L7RxQuirk l7_rx_quirks(Lan7430State *s, const uint8_t *f, size_t len)
{
    L7RxQuirk q = { 0 };

    q.status_all = l7_quirk_hit(s, L7Q_STATUS_EVERY);
    q.hash = (l7_reg(s, L7_RFE_RSS_CFG) & L7_RSS_HASH_STORE) &&
             s->quirk[L7Q_HASH_STORE] &&
             l7_rss_hash(s, f, len, &q.hash_val) &&
             l7_quirk_hit(s, L7Q_HASH_STORE);
    return q;
}

/* descriptor a of the frame (last: its LS one), before its data0 */
static void l7_rx_quirk_desc(Lan7430State *s, const L7RxQuirk *q,
                             uint64_t a, bool last, uint32_t st,
                             L7WbPending *wq)
{
    if (q->status_all && !last) {
        l7_rx_desc_wr32(s, a + 4, st, wq);
    }
    if (q->hash && last) {
        l7_rx_desc_wr32(s, a + 8, q->hash_val, wq);
        l7_rx_desc_wr32(s, a + 12, q->hash_val, wq);
    }
}

/*
 * Descriptor fetch check (desc-check): the DMA reads up to RX_CFG_A
 * PF_THRES descriptors ahead, from the head (or the end of the frame being
 * written) and below the tail, when the tail moves, the channel starts and
 * with each frame.  One whose OWN is clear was not handed over although it
 * is below the tail: RX descriptor read error, the channel stops.  These
 * reads are not counted in dma_desc_read_bytes (the model reads each
 * descriptor again when it uses it).  Returns false on an error.
 */
static bool l7_rx_prefetch(Lan7430State *s, int ch, uint32_t from)
{
    uint32_t ring = l7_reg(s, L7_RX_CFG_B(ch)) & L7_RX_CFG_B_RING_LEN_MASK;
    uint32_t pf = (l7_reg(s, L7_RX_CFG_A(ch)) & L7_RX_CFG_A_PF_THRES_MASK) >>
                  L7_RX_CFG_A_PF_THRES_SHIFT;
    uint64_t base = l7_addr64(s, L7_RX_BASE_ADDRH(ch), L7_RX_BASE_ADDRL(ch));
    uint32_t idx, tail, i, d0;

    if (!s->desc_check || !pf || !l7_rx_dma_ready(s, ch)) {
        return true;
    }
    tail = s->rx_tail[ch] % ring;
    idx = from % ring;
    for (i = 0; i < pf && idx != tail; i++) {
        pci_dma_read(PCI_DEVICE(s), base + (uint64_t)idx * l7_desc_space(s),
                     &d0, 4);
        if (!(le32_to_cpu(d0) & L7_RXD0_OWN)) {
            l7_desc_error(s, false, ch, L7DE_RX_OWN, idx);
            return false;
        }
        idx = (idx + 1) % ring;
    }
    return true;
}

/*
 * Find enough hardware-owned descriptors between head and tail of channel
 * ch for need bytes (+ an extension descriptor when ts): their indices in
 * descs[*nd] (the extension one at descs[*nd]), the next head in *idx, the
 * buffer bytes in *got.  Returns 1 when found, 0 when the ring has none
 * now, -1 when the frame can never fit (dropped, counted).
 */
/*
 * One more descriptor after a frame's buffers (the extra-buffer quirk's,
 * the timestamp extension): at *idx, below the tail and owned by the
 * device (else a descriptor error); advances *idx.  false: none to take.
 */
static bool l7_rx_take_desc(Lan7430State *s, int ch, uint64_t base,
                            unsigned sp, uint32_t tail, uint32_t *idx)
{
    uint32_t ring = l7_reg(s, L7_RX_CFG_B(ch)) & L7_RX_CFG_B_RING_LEN_MASK;
    uint32_t d0;

    if (*idx == tail) {
        return false;
    }
    l7_dma_read(s, base + (uint64_t)*idx * sp, &d0, 4, true);
    if (!(le32_to_cpu(d0) & L7_RXD0_OWN)) {
        if (s->desc_check) {
            l7_desc_error(s, false, ch, L7DE_RX_OWN, *idx);
        }
        return false;
    }
    *idx = (*idx + 1) % ring;
    return true;
}

static int l7_rx_find_descs(Lan7430State *s, int ch, uint32_t need,
                            uint32_t pad, bool ts, uint32_t *descs, int *nd,
                            uint32_t *idx, uint32_t *got, size_t size)
{
    uint32_t ring = l7_reg(s, L7_RX_CFG_B(ch)) & L7_RX_CFG_B_RING_LEN_MASK;
    uint64_t base = l7_addr64(s, L7_RX_BASE_ADDRH(ch), L7_RX_BASE_ADDRL(ch));
    unsigned sp = l7_desc_space(s);
    uint32_t tail = s->rx_tail[ch] % ring;
    uint32_t d0;
    bool extra;

    *idx = s->rx_head[ch] % ring;
    *got = 0;
    *nd = 0;
    while (*got < need) {
        if (*nd >= L7_RX_MAX_DESCS - 1 || *nd >= (int)ring - 2) {
            /* the frame can never fit: buffers far too small */
            s->cnt.rx_drop_no_desc++;
            l7_stat_add(s, L7_STAT_RX_DROPPED, 1);
            trace_lan743x_rx_drop("buffers-too-small", size);
            return -1;
        }
        if (*idx == tail) {
            return 0;
        }
        l7_dma_read(s, base + (uint64_t)*idx * sp, &d0, 4, true);
        d0 = le32_to_cpu(d0);
        if (!(d0 & L7_RXD0_OWN) && s->desc_check) {
            l7_desc_error(s, false, ch, L7DE_RX_OWN, *idx);  /* below tail */
            return 0;
        }
        if (!(d0 & L7_RXD0_OWN) || (d0 & L7_RXD0_BUF_LEN_MASK) <= pad) {
            return 0;
        }
        descs[(*nd)++] = *idx;
        *got += d0 & L7_RXD0_BUF_LEN_MASK;  /* pad counted in need */
        *idx = (*idx + 1) % ring;
    }
    /*
     * quirk-extra-buffer: "The chip occasionally sends more buffers than
     * strictly required to reach the total frame length" (the driver's
     * comment): one more descriptor, no data in it, LS and length on it.
     */
    extra = *nd < L7_RX_MAX_DESCS - 1 && l7_quirk_due(s, L7Q_EXTRA_BUFFER);
    if (extra) {
        if (!l7_rx_take_desc(s, ch, base, sp, tail, idx)) {
            return 0;
        }
        descs[(*nd)++] = (*idx + ring - 1) % ring;
    }
    if (ts) {
        if (!l7_rx_take_desc(s, ch, base, sp, tail, idx)) {
            return 0;
        }
        descs[*nd] = (*idx + ring - 1) % ring;  /* extension descriptor */
    }
    if (extra || !l7_quirk_due(s, L7Q_EXTRA_BUFFER)) {
        l7_quirk_hit(s, L7Q_EXTRA_BUFFER);  /* counted once the frame goes */
    }
    l7_rx_prefetch(s, ch, *idx);        /* the window after this frame */
    return 1;
}

/*
 * Batched descriptor write-back (property rx-wb-batch, default 1; 0 =
 * every frame written back at once, the older model).  RX_CFG_A as the
 * driver programs it (Microchip's 2017 lan743x.h names the fields):
 * WB_THRES (28:24) descriptors are written back together, with the head
 * write-back and RXFRM; WB_ON_INT_TMR (30) writes back what is pending
 * when the channel's interrupt moderation interval (INT_MOD_CFG, absolute
 * from the first pending frame) has elapsed; WB_SWFLUSH (31, self-clearing)
 * writes back at once.  A stop that completes writes back (wb-at-stop=0)
 * or leaves the batch to its timer (wb-at-stop=1, late); a channel reset
 * discards.  Without the timer bit, or a zero interval, a frame below the
 * threshold is written back at once (assumption).  The addresses (ring
 * and head write-back) are those of when the frames were written.
 */
QEMU_BUILD_BUG_ON(L7B_NUM != ARRAY_SIZE(((L7Counters *)0)->rx_wb_flush_why));
const char *const l7_batch_why[L7B_NUM] = {
    "threshold", "timer", "swflush", "stop", "full", "order",
};

static bool l7_rx_wb_batched(Lan7430State *s, int ch)
{
    return s->rx_wb_batch &&
           ((l7_reg(s, L7_RX_CFG_A(ch)) & L7_RX_CFG_A_WB_THRES_MASK) >>
            L7_RX_CFG_A_WB_THRES_SHIFT) > 1;
}

static void l7_rx_batch_rearm(Lan7430State *s)
{
    int64_t next = INT64_MAX;
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (s->rxb_due[ch]) {
            next = MIN(next, s->rxb_due[ch]);
        }
    }
    if (next == INT64_MAX) {
        timer_del(s->rxb_timer);
    } else {
        timer_mod(s->rxb_timer, next);
    }
}

/* write back channel ch's pending descriptors, head, then RXFRM */
void l7_rx_batch_flush(Lan7430State *s, int ch, int why)
{
    L7WbPending *b = &s->rxb[ch];
    int i;

    if (!b->active) {
        return;
    }
    for (i = 0; i < b->n; i++) {
        uint32_t le = cpu_to_le32(b->val[i]);
        l7_dma_write(s, b->addr[i], &le, 4, true);
    }
    l7_wb_written(s, b, s->rx_ring_gen[ch], 1u << ch, "rx", ch);
    trace_lan743x_rx_wb_flush(ch, s->rxb_descs[ch], l7_batch_why[why]);
    s->cnt.rx_wb_flushes[ch]++;
    s->cnt.rx_wb_flush_why[why]++;
    b->active = false;
    b->n = 0;
    s->rxb_descs[ch] = 0;
    if (s->rxb_due[ch]) {
        s->rxb_due[ch] = 0;
        l7_rx_batch_rearm(s);
    }
    if (b->head_en) {
        uint32_t h = cpu_to_le32(b->head_idx);

        l7_dma_write(s, b->head_addr, &h, 4, true);
        s->cnt.rx_head_wb[ch]++;
    }
    l7_rx_signal(s, ch, s->rxb_frames[ch], s->rxb_t[ch]);
    s->rxb_frames[ch] = 0;
    l7_update_irq(s);
}

/* channel reset: pending write-backs are void */
void l7_rx_batch_discard(Lan7430State *s, int ch)
{
    if (s->rxb[ch].active) {
        s->cnt.wb_discarded++;
    }
    s->wb_late &= ~(1u << ch);
    s->rxb[ch].active = false;
    s->rxb[ch].n = 0;
    s->rxb_descs[ch] = 0;
    s->rxb_frames[ch] = 0;
    if (s->rxb_due[ch] && s->rxb_timer) {
        s->rxb_due[ch] = 0;
        l7_rx_batch_rearm(s);
    }
}

/* a frame's ndesc descriptors joined channel ch's batch */
static void l7_rx_batch_add(Lan7430State *s, int ch, int ndesc, uint32_t head)
{
    uint32_t cfg = l7_reg(s, L7_RX_CFG_A(ch));
    uint32_t thres = (cfg & L7_RX_CFG_A_WB_THRES_MASK) >>
                     L7_RX_CFG_A_WB_THRES_SHIFT;
    int64_t ivl = l7_mod_interval_ns(s, L7_INT_BIT_DMA_RX(ch));

    if (!s->rxb[ch].active) {
        s->rxb[ch].gen = s->rx_ring_gen[ch];
        s->rxb[ch].head_en = cfg & L7_RX_CFG_A_HP_WB_EN;
        s->rxb[ch].head_addr = l7_addr64(s, L7_RX_HEAD_WB_ADDRH(ch),
                                         L7_RX_HEAD_WB_ADDRL(ch));
    }
    s->rxb[ch].active = true;
    s->rxb[ch].head_idx = head;
    s->rxb_descs[ch] += ndesc;
    if (s->rxb_frames[ch] < L7_WB_DELAY_BATCH) {
        s->rxb_t[ch][s->rxb_frames[ch]] = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    }
    s->rxb_frames[ch]++;
    s->cnt.rx_wb_batched_desc += ndesc;
    if (s->rxb_descs[ch] >= thres) {
        l7_rx_batch_flush(s, ch, L7B_THRES);
    } else if (!(cfg & L7_RX_CFG_A_WB_ON_INT_TMR) || !ivl) {
        l7_rx_batch_flush(s, ch, L7B_TIMER);
    } else if (!s->rxb_due[ch]) {
        s->rxb_due[ch] = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + ivl;
        l7_rx_batch_rearm(s);
    }
}

void l7_rx_batch_timer_cb(void *opaque)
{
    Lan7430State *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (s->rxb_due[ch] && s->rxb_due[ch] <= now) {
            s->rxb_due[ch] = 0;
            l7_mod_expired(s, L7_INT_BIT_DMA_RX(ch));
            l7_rx_batch_flush(s, ch, L7B_TIMER);
        }
    }
    l7_rx_batch_rearm(s);
}

/*
 * Channel ch's stop completed: its pending write-backs are written now
 * (wb-at-stop=0) or left to the write-back timer, i.e. written after the
 * stop (wb-at-stop=1, counted in wb_late_writes when they are).
 */
void l7_rx_batch_stop(Lan7430State *s, int ch)
{
    int64_t ivl = l7_mod_interval_ns(s, L7_INT_BIT_DMA_RX(ch));

    if (!s->rxb[ch].active) {
        return;
    }
    if (!s->wb_at_stop) {
        l7_rx_batch_flush(s, ch, L7B_STOP);
        return;
    }
    s->wb_late |= 1u << ch;
    if (!s->rxb_due[ch]) {
        s->rxb_due[ch] = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                         MAX(ivl, SCALE_US);
        l7_rx_batch_rearm(s);
    }
}

/*
 * One frame on its way into an RX ring (l7_rx_dma and its steps): the
 * frame with its FCS, the descriptors found for it, the faults that hit
 * its write-back and where its descriptor words go.
 */
typedef struct L7RxFrame {
    int ch;
    uint8_t *f;                 /* s->rxbuf: padded frame + FCS */
    size_t len;                 /* padded length without FCS */
    uint32_t flen, pad, idx, got, st, rep_len;
    uint64_t base;
    unsigned sp;
    bool ts;
    bool f_drop_fs, f_drop_ls, f_wb_desc, f_wb_head, f_ext_missing, batch;
    L7WbPending *wq;
    L7RxQuirk qk;
    int nd;
    uint32_t descs[L7_RX_MAX_DESCS];
} L7RxFrame;

/* the frame padded to 60 bytes, its FCS appended, in s->rxbuf */
static void l7_rx_frame_init(Lan7430State *s, L7RxFrame *fr, int ch,
                             const uint8_t *buf, size_t size)
{
    uint8_t *f = s->rxbuf;
    size_t len = size;
    uint32_t crc;

    memcpy(f, buf, len);
    if (len < 60) {
        memset(f + len, 0, 60 - len);
        len = 60;
    }
    fr->ch = ch;
    fr->f = f;
    fr->len = len;
    fr->flen = len + 4;

    /* FCS */
    crc = crc32(0, f, len);
    stl_le_p(f + len, crc);

    fr->sp = l7_desc_space(s);
    fr->base = l7_addr64(s, L7_RX_BASE_ADDRH(ch), L7_RX_BASE_ADDRL(ch));
    fr->pad = (l7_reg(s, L7_RX_CFG_B(ch)) & L7_RX_CFG_B_PAD_MASK) >>
              L7_RX_CFG_B_PAD_SHIFT;
    fr->ts = l7_rx_ts_wanted(s, ch, f, len);
}

/* faults on this frame's write-back */
static void l7_rx_frame_faults(Lan7430State *s, L7RxFrame *fr)
{
    int ch = fr->ch;
    bool f_short = l7_fault_hit(s, L7F_RX_LEN_SHORT);
    bool f_long = l7_fault_hit(s, L7F_RX_LEN_LONG);
    bool f_zero = l7_fault_hit(s, L7F_RX_LEN_ZERO);

    fr->f_drop_fs = l7_fault_hit(s, L7F_DROP_FS);
    fr->f_drop_ls = l7_fault_hit(s, L7F_DROP_LS);
    fr->f_ext_missing = l7_fault_hit(s, L7F_EXT_MISSING);
    fr->f_wb_desc = l7_fault_hit(s, L7F_WB_DELAY_DESC);
    fr->f_wb_head = !fr->f_wb_desc && l7_fault_hit(s, L7F_WB_DELAY_HEAD);
    fr->rep_len = fr->flen;
    if (f_zero) {
        fr->rep_len = 0;
    } else if (f_long) {
        fr->rep_len = MIN(fr->got + 1024, L7_RXD0_FRAME_LEN_MASK >>
                                          L7_RXD0_FRAME_LEN_SHIFT);
    } else if (f_short) {
        fr->rep_len = fr->flen / 2;
    }
    if (fr->rep_len != fr->flen) {
        trace_lan743x_fault_rx_len(ch, fr->flen, fr->rep_len);
    }
    if (fr->f_drop_fs) {
        trace_lan743x_fault_rx_flag(ch, "FS");
    }
    if (fr->f_drop_ls) {
        trace_lan743x_fault_rx_flag(ch, "LS");
    }
    if (fr->f_ext_missing) {
        /*
         * EXT set in the last descriptor, but no extension
         * descriptor written: the next frame starts right after it
         * (a reserved extension descriptor is left to that frame).
         */
        trace_lan743x_fault_rx_flag(ch, "extension descriptor");
        if (fr->ts) {
            fr->idx = fr->descs[fr->nd];
            fr->ts = false;
        }
    }
    if (fr->f_wb_desc || fr->f_wb_head) {
        s->wb.active = true;
        s->wb.head = fr->f_wb_head;
        s->wb.ch = ch;
        s->wb.n = 0;
        timer_mod(s->wb_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  (int64_t)s->fault_wb_delay_us * 1000);
        trace_lan743x_fault_wb_delay(ch, fr->f_wb_head ? "head" : "descriptor",
                                     s->fault_wb_delay_us);
    }
}

/* descriptor write-backs: now, held by a fault, or batched */
static void l7_rx_frame_wb_queue(Lan7430State *s, L7RxFrame *fr)
{
    int ch = fr->ch;

    fr->batch = !fr->f_wb_desc && !fr->f_wb_head && l7_rx_wb_batched(s, ch);
    if (fr->batch && (s->rxb[ch].n + 2 * fr->nd + 3 > L7_WB_MAX_WRITES ||
                      s->rxb[ch].gen != s->rx_ring_gen[ch])) {
        l7_rx_batch_flush(s, ch, L7B_FULL);     /* full, or an old ring */
    } else if (!fr->batch && s->rxb[ch].active) {
        l7_rx_batch_flush(s, ch, L7B_ORDER);    /* keep the order */
    }
    fr->wq = fr->f_wb_desc ? &s->wb : fr->batch ? &s->rxb[ch] : NULL;
}

/* the checksum status of the frame (counted) and its layout quirks */
static void l7_rx_frame_status(Lan7430State *s, L7RxFrame *fr)
{
    fr->st = l7_rx_csum_status(s, fr->f, fr->len);
    if (fr->st & (L7_RXD1_ICE | L7_RXD1_TCE)) {
        s->cnt.rx_csum_errors++;
    } else if (fr->st & L7_RXD1_ICSM) {
        s->cnt.rx_csum_unchecked++;
    } else {
        s->cnt.rx_csum_verified++;
    }
    fr->qk = l7_rx_quirks(s, fr->f, fr->len);
}

/*
 * Descriptor i of the frame: copy its part of the data (from *off) into
 * the buffer, write the descriptor back (FS; on the last one LS, length,
 * EXT and the status).
 */
static void l7_rx_frame_desc(Lan7430State *s, L7RxFrame *fr, int i,
                             uint32_t *off)
{
    uint32_t d[4], blen, chunk, skip;
    uint64_t a = fr->base + (uint64_t)fr->descs[i] * fr->sp;
    bool last = (i == fr->nd - 1);

    l7_dma_read(s, a, d, 16, true);
    blen = le32_to_cpu(d[0]) & L7_RXD0_BUF_LEN_MASK;
    skip = (i == 0) ? fr->pad : 0;
    chunk = MIN(blen - skip, fr->flen - *off);
    l7_dma_write(s, (((uint64_t)le32_to_cpu(d[2])) << 32 |
                     le32_to_cpu(d[1])) + skip, fr->f + *off, chunk, false);
    *off += chunk;
    d[0] = blen | ((i == 0 && !fr->f_drop_fs) ? L7_RXD0_FS : 0);
    if (last) {
        d[0] |= (fr->f_drop_ls ? 0 : L7_RXD0_LS) |
                (fr->rep_len << L7_RXD0_FRAME_LEN_SHIFT) |
                ((fr->ts || fr->f_ext_missing) ? L7_RXD0_EXT : 0);
        l7_rx_desc_wr32(s, a + 4, fr->st, fr->wq);
    }
    l7_rx_quirk_desc(s, &fr->qk, a, last, fr->st, fr->wq);
    l7_rx_desc_wr32(s, a, d[0], fr->wq);
    s->cnt.rx_desc_consumed[fr->ch]++;
    s->cnt.rx_desc_written[fr->ch]++;
}

/* the extension descriptor: the receive timestamp */
static void l7_rx_frame_ext(Lan7430State *s, L7RxFrame *fr)
{
    uint64_t a = fr->base + (uint64_t)fr->descs[fr->nd] * fr->sp;
    int64_t now = l7_ptp_now(s);

    l7_rx_desc_wr32(s, a + 4, now / NANOSECONDS_PER_SECOND, fr->wq);
    l7_rx_desc_wr32(s, a + 8, now % NANOSECONDS_PER_SECOND, fr->wq);
    l7_rx_desc_wr32(s, a, L7_RXD0_EXT, fr->wq);
    s->cnt.rx_desc_consumed[fr->ch]++;
    s->cnt.rx_desc_written[fr->ch]++;
}

/*
 * The frame is in the ring: new head, counters, then the head write-back
 * and RXFRM (now, held back by a fault, or with the batch), and the
 * faults that start with a frame (rx-irq-hold, rx-stall).
 */
static void l7_rx_frame_done(Lan7430State *s, L7RxFrame *fr, size_t size)
{
    int ch = fr->ch;

    s->rx_head[ch] = fr->idx;
    s->cnt.rx_frames++;
    s->cnt.rx_frames_ch[ch]++;
    s->cnt.rx_bytes += size;
    trace_lan743x_rx_frame(ch, fr->flen, fr->nd, fr->idx);
    /* rx-irq-hold: from this frame on, no RX interrupt for a while; the
     * frames are written back as usual (status RXFRM still set) */
    if (!s->rx_irq_held && l7_fault_hit(s, L7F_RX_IRQ_HOLD)) {
        s->rx_irq_held = true;
        timer_mod(s->rx_irq_hold_timer,
                  qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  (int64_t)s->fault_rx_irq_hold_ms * SCALE_MS);
        trace_lan743x_fault_rx_irq_hold(s->fault_rx_irq_hold_ms);
    }
    if (fr->f_wb_head) {
        s->wb.head_idx = fr->idx;   /* head write-back + interrupt held back */
    } else if (fr->batch) {
        l7_rx_batch_add(s, ch, fr->nd + (fr->ts ? 1 : 0), fr->idx);
    } else {
        l7_rx_head_wb(s, ch, fr->idx);
        l7_rx_signal(s, ch, 1, NULL);
        l7_update_irq(s);
    }
    if (l7_fault_hit(s, L7F_RX_STALL)) {
        s->rx_stalled = true;
        timer_mod(s->rx_stall_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  (int64_t)s->fault_rx_stall_ms * SCALE_MS);
        trace_lan743x_fault_rx_stall(s->fault_rx_stall_ms);
    }
}

/*
 * RX DMA: write one frame into channel ch's ring.  Returns 1 when written,
 * 0 when the ring has no usable descriptors now (nothing changed), -1 when
 * the frame can never fit (dropped, counted).
 */
static int l7_rx_dma(Lan7430State *s, int ch, const uint8_t *buf,
                     size_t size)
{
    L7RxFrame fr;
    uint32_t off = 0;
    int i;

    l7_rx_frame_init(s, &fr, ch, buf, size);
    switch (l7_rx_find_descs(s, ch, fr.flen + fr.pad, fr.pad, fr.ts,
                             fr.descs, &fr.nd, &fr.idx, &fr.got, size)) {
    case 0:
        return 0;
    case -1:
        return -1;
    }
    l7_rx_frame_faults(s, &fr);
    l7_rx_frame_wb_queue(s, &fr);

    /* copy data and write back descriptors */
    l7_rx_frame_status(s, &fr);
    for (i = 0; i < fr.nd; i++) {
        l7_rx_frame_desc(s, &fr, i, &off);
    }
    if (fr.ts) {
        l7_rx_frame_ext(s, &fr);
    }
    l7_rx_frame_done(s, &fr, size);
    return 1;
}

/* ---- per-channel RX FIFO (FCT) ---- */

static uint32_t l7_fifo_bytes(size_t len)
{
    return MAX(len, 60) + 4;
}

static bool l7_op_busy(Lan7430State *s, int op)
{
    return s->op_due[op] != 0;
}

/*
 * Flow control, our side: with MAC_FLOW.TX_FCEN and FCT_FLOW(ch).REQ_EN
 * the MAC sends a pause frame (XOFF, pause time MAC_FLOW.FCPT) when the
 * channel's FIFO level reaches ON, sends it again (refresh) each time half
 * its pause time has elapsed while a paused channel is still above OFF,
 * and sends a zero pause frame (XON) once every paused channel's level is
 * back at or below OFF.  All counted in STAT_TX_PAUSE_FRAMES.  Without
 * TX_FCEN the MAC sends no pause frame at all: a pause in progress is
 * forgotten without XON (the partner waits it out).  A pause stops the
 * whole link.
 *
 * The link partner: with peer-pause=0 (default) it ignores pause frames
 * and the FIFO overflows; with peer-pause=1 an XOFF holds it for FCPT x
 * 512 bit times at the link rate (a refresh restarts that time, an XON
 * ends it), after it has sent peer-pause-lag-frames more frames (those it
 * had in flight).  While it is held, lan7430_receive refuses frames: QEMU
 * queues them (the partner's buffer) until the pause ends.
 */

/* the pause time the MAC sends in XOFF (FCPT quanta) */
static int64_t l7_pause_ns(Lan7430State *s)
{
    return l7_quanta_ns(s, l7_reg(s, L7_MAC_FLOW) & L7_MAC_FLOW_FCPT_MASK);
}

/* the partner is paused and has nothing left in flight: it sends nothing */
static bool l7_peer_holds(Lan7430State *s)
{
    return s->peer_hold_until && !s->peer_lag_left;
}

/* the partner's pause ends: XON, expiry, or peer-pause switched off */
static void l7_peer_resume(Lan7430State *s)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (!s->peer_hold_until) {
        return;
    }
    s->cnt.peer_paused_ns += now - s->peer_hold_start;
    s->peer_hold_until = 0;
    s->peer_lag_left = 0;
    timer_del(s->peer_pause_timer);
    trace_lan743x_peer_pause(0, 0);
}

/* the link partner receives our pause frame of q ns (0: XON) */
static void l7_peer_pause_frame(Lan7430State *s, int64_t now, int64_t q)
{
    if (!s->peer_pause) {
        return;                 /* a partner that ignores pause frames */
    }
    if (!q) {
        l7_peer_resume(s);
        return;
    }
    if (!s->peer_hold_until) {
        /* it finishes the frame it is sending, and what else is in flight */
        s->peer_hold_start = now;
        s->peer_lag_left = s->peer_pause_lag;
    }
    s->peer_hold_until = now + q;       /* a refresh restarts its timer */
    timer_mod(s->peer_pause_timer, s->peer_hold_until);
    trace_lan743x_peer_pause(1, q);
}

/* the MAC sends XOFF (pause time FCPT) or XON */
static void l7_pause_send(Lan7430State *s, bool xoff)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t q = xoff ? l7_pause_ns(s) : 0;

    l7_stat_add(s, L7_STAT_TX_PAUSE_FRAMES, 1);
    s->cnt.tx_pause_frames++;
    if (!xoff) {
        s->cnt.tx_xon_frames++;
    }
    if (q) {
        timer_mod(s->pause_refresh_timer, now + q / 2);
    } else {
        timer_del(s->pause_refresh_timer);
    }
    l7_peer_pause_frame(s, now, q);
}

static void l7_rx_pause_update(Lan7430State *s, int ch)
{
    uint32_t flow = l7_reg(s, L7_FCT_FLOW(ch));
    uint32_t on = (flow & L7_FCT_FLOW_ON_MASK) * L7_FCT_FLOW_UNIT;
    uint32_t off = ((flow & L7_FCT_FLOW_OFF_MASK) >> L7_FCT_FLOW_OFF_SHIFT) *
                   L7_FCT_FLOW_UNIT;
    bool mac_fc = l7_reg(s, L7_MAC_FLOW) & L7_MAC_FLOW_TX_FCEN;
    bool fc = mac_fc && (flow & L7_FCT_FLOW_REQ_EN) && on;
    uint32_t was = s->pause_ch;

    if (fc && s->rxf[ch].used >= on) {
        s->pause_ch |= 1u << ch;
    } else if (!fc || s->rxf[ch].used <= off) {
        s->pause_ch &= ~(1u << ch);
    }
    if (!was != !s->pause_ch) {
        if (mac_fc) {
            trace_lan743x_rx_pause(ch, s->pause_ch != 0, s->rxf[ch].used);
            l7_pause_send(s, s->pause_ch != 0);
        } else {
            timer_del(s->pause_refresh_timer);  /* no pause frames at all */
        }
    }
}

/* half the pause time has elapsed: XOFF again if still above OFF */
void l7_pause_refresh_cb(void *opaque)
{
    Lan7430State *s = opaque;
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (s->pause_ch & (1u << ch)) {
            l7_rx_pause_update(s, ch);  /* TX_FCEN, REQ_EN still set? */
        }
    }
    if (s->pause_ch) {
        trace_lan743x_rx_pause_refresh(s->pause_ch);
        l7_pause_send(s, true);
    }
    l7_rx_kick(s);                      /* after an XON above */
}

/* the partner's pause time ran out (no XON, no refresh) */
void l7_peer_pause_cb(void *opaque)
{
    Lan7430State *s = opaque;

    l7_peer_resume(s);
    l7_rx_kick(s);
}

/* peer-pause changed: a partner that no longer honours pause sends again */
void l7_peer_pause_changed(Lan7430State *s)
{
    if (!s->peer_pause) {
        l7_peer_resume(s);
    }
    l7_rx_kick(s);
}

/* a frame for channel ch waits in its FIFO, or overflows it (dropped) */
static void l7_rx_fifo_push(Lan7430State *s, int ch, const uint8_t *buf,
                            size_t size)
{
    L7RxFifo *q = &s->rxf[ch];
    uint32_t n = l7_fifo_bytes(size);
    L7RxFifoEnt *e;

    if (q->used + n > s->rx_fifo_kib * 1024) {
        s->cnt.rx_fifo_overflow[ch]++;
        s->fct_int_sts |= L7_FCT_INT_RDFO(ch);
        l7_stat_add(s, L7_STAT_RX_DROPPED, 1);
        trace_lan743x_rx_fifo_overflow(ch, size, q->used);
        return;
    }
    e = g_malloc(sizeof(*e) + size);
    e->len = size;
    memcpy(e->data, buf, size);
    QSIMPLEQ_INSERT_TAIL(&q->q, e, next);
    q->used += n;
    q->frames++;
    s->cnt.rx_fifo_queued[ch]++;
    s->cnt.rx_fifo_peak_bytes[ch] = MAX(s->cnt.rx_fifo_peak_bytes[ch],
                                        q->used);
    trace_lan743x_rx_fifo_queue(ch, size, q->used);
    l7_rx_pause_update(s, ch);
}

/* ---- RX DMA that takes time (dma-rate, wb-latency-ns) ---- */

/*
 * With dma-rate (bytes per us of virtual time over the PCIe link, shared
 * by the channels) or wb-latency-ns set, every frame passes its channel's
 * FIFO and is in the ring (data, then its descriptors written back, RXFRM)
 * only when its DMA has completed: it starts when the frame is at the head
 * of the FIFO, the channel has a descriptor and the link is free, moves
 * frame + FCS bytes at dma-rate, and its descriptor write-back lands
 * wb-latency-ns after the data.  One frame per channel moves at a time
 * (the next one waits for the write-back); the frame occupies the FIFO
 * until it is in the ring.  Both 0: at once, within the arrival or the
 * tail write (the older model).
 */
static bool l7_rx_dma_timed(Lan7430State *s)
{
    return s->dma_rate || s->wb_latency_ns;
}

static void l7_rx_dma_rearm(Lan7430State *s)
{
    int64_t next = INT64_MAX;
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (s->rx_dma_due[ch]) {
            next = MIN(next, s->rx_dma_due[ch]);
        }
    }
    if (next == INT64_MAX) {
        timer_del(s->rx_dma_timer);
    } else {
        timer_mod(s->rx_dma_timer, next);
    }
}

/* channel ch has at least one descriptor below the (fetched) tail */
static bool l7_rx_has_desc(Lan7430State *s, int ch)
{
    uint32_t ring = l7_reg(s, L7_RX_CFG_B(ch)) & L7_RX_CFG_B_RING_LEN_MASK;

    return ring && s->rx_head[ch] % ring != s->rx_tail[ch] % ring;
}

/* may the frame of size bytes at the head of ch's FIFO go into the ring
 * now?  If not, its DMA is started (or still in progress) */
static bool l7_rx_dma_time(Lan7430State *s, int ch, size_t size)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t start, data_ns;

    if (!l7_rx_dma_timed(s)) {
        return true;
    }
    if (!s->rx_dma_due[ch]) {
        if (!l7_rx_has_desc(s, ch)) {
            return false;       /* no descriptor: the DMA cannot start */
        }
        start = MAX(now, s->dma_link_free);
        data_ns = s->dma_rate ?
                  DIV_ROUND_UP((int64_t)l7_fifo_bytes(size) * 1000,
                               s->dma_rate) : 0;
        s->dma_link_free = start + data_ns;
        s->rx_dma_t0[ch] = now;
        s->rx_dma_due[ch] = start + data_ns + s->wb_latency_ns;
        l7_rx_dma_rearm(s);
        return false;
    }
    if (s->rx_dma_due[ch] > now) {
        return false;
    }
    s->cnt.rx_dma_timed_frames++;
    s->cnt.rx_dma_wait_ns += now - s->rx_dma_t0[ch];
    s->cnt.rx_dma_wait_max_ns = MAX(s->cnt.rx_dma_wait_max_ns,
                                    now - s->rx_dma_t0[ch]);
    s->rx_dma_due[ch] = 0;
    l7_rx_dma_rearm(s);
    return true;
}

void l7_rx_dma_timer_cb(void *opaque)
{
    Lan7430State *s = opaque;

    l7_rx_kick(s);
    l7_rx_dma_rearm(s);
}

/* ---- DMA coalescing (dma-coal) ---- */

/*
 * DMAC_CFG.COAL_EN (the driver sets it on every chip but A0) with
 * DMAC_COAL_CFG as the driver programs it (TIMER_LIMIT 1, RX_THRES 0x0C,
 * INT_EXIT_COAL, CSR_EXIT_COAL, FLUSH_INTS, TIMER_TX_START, TX_THRES
 * 0x0A; field names from Microchip's 2017 lan743x.h, semantics not
 * documented).  Modelled as DMA coalescing for PCIe power saving: once
 * the RX FIFOs are empty and no DMA moves, the device coalesces: arriving
 * frames stay in their FIFO (no DMA, no interrupt) until the FIFOs hold
 * RX_THRES x dma-coal-thres-unit bytes, TIMER_LIMIT x
 * dma-coal-timer-unit-us have passed since the first held frame, the host
 * accesses a CSR (CSR_EXIT_COAL) or the device sends an interrupt
 * (INT_EXIT_COAL); then they are moved and coalescing starts again when
 * the FIFOs are empty.  TIMER_LIMIT 0: no timer exit.  The TX side and
 * FLUSH_INTS are not modelled.  dma-coal=0: COAL_EN ignored (older model).
 */
static const char *const l7_coal_why[4] = {
    "threshold", "timer", "csr", "interrupt",
};

bool l7_coal_on(Lan7430State *s)
{
    return s->dma_coal && (l7_reg(s, L7_DMAC_CFG) & L7_DMAC_CFG_COAL_EN);
}

static uint32_t l7_fifo_total(Lan7430State *s)
{
    uint32_t n = 0;
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        n += s->rxf[ch].used;
    }
    return n;
}

/* coalescing ends (why: l7_coal_why[]); a no-op with nothing held */
void l7_coal_exit(Lan7430State *s, int why)
{
    if (!s->coal_idle || !l7_fifo_total(s)) {
        return;
    }
    s->cnt.dma_coal_exit_why[why]++;
    trace_lan743x_dma_coal_exit(l7_coal_why[why], l7_fifo_total(s));
    s->coal_idle = false;
    s->coal_due = 0;
    timer_del(s->coal_timer);
    l7_rx_kick(s);
}

void l7_coal_timer_cb(void *opaque)
{
    Lan7430State *s = opaque;
    bool intr = s->coal_int;

    s->coal_int = false;
    if (s->coal_due && s->coal_due <= qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL)) {
        l7_coal_exit(s, 1);
    } else if (intr) {
        l7_coal_exit(s, 3);
        if (s->coal_due) {
            timer_mod(s->coal_timer, s->coal_due);
        }
    }
}

/* a frame was held: the threshold reached, or the timer started */
static void l7_coal_held(Lan7430State *s)
{
    uint32_t cfg = l7_reg(s, L7_DMAC_COAL_CFG);
    uint32_t thres = (cfg & L7_DMAC_COAL_CFG_RX_THRES_MASK) *
                     s->dma_coal_thres_unit;
    uint32_t limit = cfg >> L7_DMAC_COAL_CFG_TIMER_SHIFT;

    s->cnt.dma_coal_holds++;
    if (l7_fifo_total(s) >= thres) {
        l7_coal_exit(s, 0);
    } else if (!s->coal_due && limit) {
        s->coal_due = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                      (int64_t)limit * s->dma_coal_timer_unit_us * SCALE_US;
        timer_mod(s->coal_timer, s->coal_due);
    }
}

/* coalescing starts again when nothing is in the FIFOs or moving */
static void l7_coal_enter(Lan7430State *s)
{
    int ch;

    if (s->coal_idle || !l7_coal_on(s) || l7_fifo_total(s)) {
        return;
    }
    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (s->rx_dma_due[ch]) {
            return;
        }
    }
    s->coal_idle = true;
}

/* move frames from channel ch's FIFO into its ring while it takes them */
static void l7_rx_fifo_drain(Lan7430State *s, int ch)
{
    L7RxFifo *q = &s->rxf[ch];
    L7RxFifoEnt *e;

    while ((e = QSIMPLEQ_FIRST(&q->q)) && l7_rx_dma_ready(s, ch) &&
           !s->rx_stalled && !s->wb.active &&
           !(s->coal_idle && l7_coal_on(s))) {
        if (!l7_rx_dma_time(s, ch, e->len)) {
            break;              /* its DMA takes time, or cannot start */
        }
        if (l7_rx_dma(s, ch, e->data, e->len) == 0) {
            break;              /* ring full: stays in the FIFO */
        }
        QSIMPLEQ_REMOVE_HEAD(&q->q, next);
        q->used -= l7_fifo_bytes(e->len);
        q->frames--;
        g_free(e);
    }
    l7_rx_pause_update(s, ch);
    l7_coal_enter(s);
}

/* empty channel ch's FIFO: FCT disable (frames dropped) or reset */
void l7_rx_fifo_flush(Lan7430State *s, int ch, bool disable)
{
    L7RxFifo *q = &s->rxf[ch];
    L7RxFifoEnt *e;

    while ((e = QSIMPLEQ_FIRST(&q->q))) {
        QSIMPLEQ_REMOVE_HEAD(&q->q, next);
        if (disable) {
            s->cnt.rx_drop_disabled++;
            l7_stat_add(s, L7_STAT_RX_DROPPED, 1);
            trace_lan743x_rx_drop("fifo-disabled", e->len);
        } else {
            s->cnt.rx_fifo_flushed++;
            trace_lan743x_rx_drop("fifo-reset", e->len);
        }
        g_free(e);
    }
    q->used = 0;
    q->frames = 0;
    if (s->rx_dma_due[ch]) {
        s->rx_dma_due[ch] = 0;          /* the frame moving is gone */
        if (s->rx_dma_timer) {
            l7_rx_dma_rearm(s);
        }
    }
    l7_rx_pause_update(s, ch);
}

/*
 * One frame off the wire: MAC, filter, channel; then straight into the
 * ring, or into the channel's FIFO while the channel is stopped, its ring
 * is full or older frames wait there.  Never refused: a stopped channel
 * does not hold back the other channels.
 */
static void l7_receive_frame(Lan7430State *s, const uint8_t *buf,
                             size_t size)
{
    int ch = l7_rx_mac(s, buf, size);

    if (ch < 0) {
        return;
    }
    if (!l7_rx_fifo_enabled(s, ch) || l7_op_busy(s, L7O_FCT_RX_RST + ch)) {
        bool rst = l7_op_busy(s, L7O_FCT_RX_RST + ch);

        if (rst) {
            s->cnt.rx_drop_fifo_reset++;
        } else {
            s->cnt.rx_drop_disabled++;
        }
        l7_stat_add(s, L7_STAT_RX_DROPPED, 1);
        trace_lan743x_rx_drop(rst ? "fifo-in-reset" : "channel-stopped", size);
        return;
    }
    l7_rx_fifo_drain(s, ch);
    if (!l7_rx_dma_ready(s, ch)) {
        s->cnt.rx_fifo_holds++;
        trace_lan743x_rx_fifo_hold(ch, size);
    } else if (s->rx_stalled || s->wb.active) {
        s->cnt.rx_fault_holds++;        /* rx-stall / wb-delay: DMA idle */
    } else if (s->coal_idle && l7_coal_on(s)) {
        l7_rx_fifo_push(s, ch, buf, size);      /* DMA coalescing */
        l7_coal_held(s);
        return;
    } else if (l7_rx_dma_timed(s)) {
        /* the DMA takes time: every frame passes the FIFO */
        if (!l7_rx_has_desc(s, ch)) {
            s->cnt.rx_no_desc_stalls++;
            trace_lan743x_rx_nodesc(ch, s->rx_head[ch], s->rx_tail[ch]);
        }
        l7_rx_fifo_push(s, ch, buf, size);
        l7_rx_fifo_drain(s, ch);
        return;
    } else if (QSIMPLEQ_EMPTY(&s->rxf[ch].q)) {
        if (l7_rx_dma(s, ch, buf, size) != 0) {
            return;             /* written, or dropped as too big */
        }
        s->cnt.rx_no_desc_stalls++;
        trace_lan743x_rx_nodesc(ch, s->rx_head[ch], s->rx_tail[ch]);
    } else {
        s->cnt.rx_no_desc_stalls++;     /* behind frames waiting for descs */
    }
    l7_rx_fifo_push(s, ch, buf, size);
}

ssize_t lan7430_receive(NetClientState *nc, const uint8_t *buf,
                        size_t size)
{
    Lan7430State *s = qemu_get_nic_opaque(nc);

    if (l7_peer_holds(s)) {
        /* we sent XOFF and the link partner honours it: it sends nothing */
        s->rx_blocked = true;
        s->cnt.rx_pause_holds++;
        return 0;
    }
    if (!l7_rx_enabled(s)) {
        s->rx_reserved = false;         /* dropped below: no wire slot */
    } else if (s->rate_mbps) {
        int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

        if (!s->rx_reserved) {
            s->rx_held_ns = l7_wire_ns(s, size);
            s->rx_held_ch = l7_rss_channel(s, buf, size);
            s->rx_held_due = l7_wire_book(s, &s->rx_wire_free, s->rx_backlog,
                                          s->rx_held_ns);
            s->rx_reserved = true;
        }
        if (s->rx_held_due > now) {
            /* not yet received completely off the wire */
            s->rx_blocked = true;
            s->rx_backlog = true;
            if (!timer_pending(s->rx_pace_timer)) {
                s->cnt.rx_pace_holds++;
                trace_lan743x_pace("rx", s->rx_held_due - now);
            }
            timer_mod(s->rx_pace_timer, s->rx_held_due);
            return 0;
        }
        l7_meter_frame(s, &s->rx_meter, now, size, &s->cnt.rx_wire_bytes);
    }
    if (s->peer_hold_until) {
        /* paused, but this frame was already on its way (lag) */
        s->peer_lag_left--;
        s->cnt.rx_frames_after_xoff++;
    }
    l7_receive_frame(s, buf, size);
    s->rx_reserved = false;             /* the booked frame went through */
    s->rx_mac_finishing = false;        /* the frame a stop waited for */
    s->rx_dma_finishing = 0;
    return size;
}

void l7_rx_kick(Lan7430State *s)
{
    NetClientState *nc = qemu_get_queue(s->nic);
    int ch;

    /* the FIFOs first: their frames are older than anything QEMU holds */
    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        l7_rx_prefetch(s, ch, s->rx_head[ch]);
        l7_rx_fifo_drain(s, ch);
    }
    if (!s->rx_blocked || l7_peer_holds(s)) {
        return;
    }
    s->rx_blocked = false;
    /*
     * Deliver the frames QEMU holds in our own incoming queue first, in
     * order.  qemu_flush_queued_packets() flushes a hub peer's queues
     * *before* ours, which would reorder frames (TCP then sees OFO/DSACK).
     * If a frame blocks again, the remaining ones stay queued.
     */
    nc->receive_disabled = 0;
    if (!qemu_net_queue_flush(nc->incoming_queue) || s->rx_blocked) {
        return;
    }
    qemu_flush_queued_packets(nc);
    if (!s->rx_blocked) {
        s->rx_backlog = false;  /* everything that waited went through */
    }
}
