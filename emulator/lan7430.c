/*
 * QEMU model of the Microchip LAN7430 PCIe Gigabit Ethernet controller
 * with its internal LAN88xx-compatible PHY.
 *
 * The specification is the upstream Linux lan743x driver; see
 * emulator/README.md in the lab repository for what is modelled and every
 * assumption made where the driver does not pin the hardware down.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/pci.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "net/net.h"
#include "net/queue.h"
#include "net/eth.h"
#include "net/checksum.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qemu/bswap.h"
#include "qemu/queue.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qom/object.h"
#include "sysemu/dma.h"
#include "trace.h"
#include "lan7430.h"
#include <zlib.h>

#define TYPE_LAN7430 "lan7430"
OBJECT_DECLARE_SIMPLE_TYPE(Lan7430State, LAN7430)

#define L7_MSIX_BAR         2
#define L7_RXBUF_MAX        (16 * 1024)
#define L7_TXBUF_MAX        (256 * 1024)
#define L7_NREGS            (L7_CSR_SIZE / 4)
#define L7_MMD_SLOTS        32

/*
 * Fault injection.  Every fault has a count (fire on the next N
 * opportunities) and an "every" (fire on every Nth opportunity until
 * cleared).  Opportunities: a received frame written to the ring for the
 * RX faults, a tick of the fault's own timer for spurious-irq and link-flap.
 */
enum {
    L7F_RX_LEN_SHORT,
    L7F_RX_LEN_LONG,
    L7F_RX_LEN_ZERO,
    L7F_DROP_FS,
    L7F_DROP_LS,
    L7F_SPURIOUS_IRQ,
    L7F_WB_DELAY_DESC,
    L7F_WB_DELAY_HEAD,
    L7F_LINK_FLAP,
    L7F_RX_STALL,
    L7F_EXT_MISSING,
    L7F_NUM
};

static const char *const l7_fault_names[L7F_NUM] = {
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
};

typedef struct L7Fault {
    uint32_t count;             /* fire on the next N opportunities */
    uint32_t every;             /* fire on every Nth opportunity, 0 = off */
    uint32_t seen;              /* opportunities since the last "every" hit */
} L7Fault;

/* descriptor writes held back by the wb-delay faults */
#define L7_WB_MAX_WRITES    136
typedef struct L7WbPending {
    bool active;
    bool head;                  /* head write-back + interrupt held back */
    int ch;
    uint32_t head_idx;
    int n;
    uint64_t addr[L7_WB_MAX_WRITES];
    uint32_t val[L7_WB_MAX_WRITES];
} L7WbPending;

/*
 * Per-channel RX FIFO of the FIFO controller (FCT): frames that passed the
 * MAC and the receive filter and wait for their DMA channel.  Capacity in
 * bytes (frame padded to 60 + FCS), property rx-fifo-kib.
 */
typedef struct L7RxFifoEnt {
    QSIMPLEQ_ENTRY(L7RxFifoEnt) next;
    size_t len;
    uint8_t data[];
} L7RxFifoEnt;

typedef struct L7RxFifo {
    QSIMPLEQ_HEAD(, L7RxFifoEnt) q;
    uint32_t used;              /* bytes */
    uint32_t frames;
} L7RxFifo;

/*
 * Operations that take time on the silicon and complete from a timer:
 * kinds (one QOM property each) and slots (one per channel and register).
 */
enum {
    L7A_DMA_STOP,               /* DMAC_CMD STOP_R/STOP_T: STOP_PENDING */
    L7A_DMA_RESET,              /* DMAC_CMD SWR/RX_SWR/TX_SWR read 1 */
    L7A_FIFO_RESET,             /* FCT_RX_CTL/FCT_TX_CTL RESET read 1 */
    L7A_MAC_DIS,                /* MAC_RX.RXD / MAC_TX.TXD set later */
    L7A_KINDS
};

static const char *const l7_async_names[L7A_KINDS] = {
    [L7A_DMA_STOP] = "dma-stop",
    [L7A_DMA_RESET] = "dma-reset",
    [L7A_FIFO_RESET] = "fifo-reset",
    [L7A_MAC_DIS] = "mac-disable",
};

enum {
    L7O_RX_STOP = 0,                            /* + RX channel */
    L7O_TX_STOP = L7O_RX_STOP + L7_NUM_RX_CH,   /* + TX channel */
    L7O_RX_SWR = L7O_TX_STOP + L7_NUM_TX_CH,
    L7O_TX_SWR = L7O_RX_SWR + L7_NUM_RX_CH,
    L7O_DMAC_SWR = L7O_TX_SWR + L7_NUM_TX_CH,
    L7O_FCT_RX_RST,
    L7O_FCT_TX_RST = L7O_FCT_RX_RST + L7_NUM_RX_CH,
    L7O_MAC_RXD = L7O_FCT_TX_RST + L7_NUM_TX_CH,
    L7O_MAC_TXD,
    L7O_NUM
};

typedef struct L7Counters {
    uint64_t reg_reads[L7_NREGS];
    uint64_t reg_writes[L7_NREGS];
    uint64_t irq_vec[L7_NUM_VECTORS];
    uint64_t irq_intx_assert;
    uint64_t irq_moderated;
    uint64_t rx_desc_consumed[L7_NUM_RX_CH];
    uint64_t rx_desc_written[L7_NUM_RX_CH];
    uint64_t rx_head_wb[L7_NUM_RX_CH];
    uint64_t rx_frames_ch[L7_NUM_RX_CH];
    uint64_t tx_desc_consumed;
    uint64_t tx_head_wb;
    uint64_t dma_desc_read_bytes;
    uint64_t dma_desc_write_bytes;
    uint64_t dma_data_read_bytes;
    uint64_t dma_data_write_bytes;
    uint64_t rx_frames;
    uint64_t rx_bytes;
    uint64_t tx_frames;
    uint64_t tx_bytes;
    uint64_t tx_tso_frames;
    uint64_t tx_tso_segments;
    uint64_t tx_csum_offload;
    uint64_t rx_no_desc_stalls;
    uint64_t rx_fifo_holds;
    uint64_t rx_drop_no_desc;
    uint64_t rx_drop_size;
    uint64_t rx_drop_filter;
    uint64_t rx_drop_disabled;
    uint64_t tx_drop_link_down;
    uint64_t tx_bad_frames;
    uint64_t tx_backpressure;
    uint64_t rx_csum_verified;
    uint64_t rx_csum_errors;
    uint64_t rx_csum_unchecked;
    uint64_t irq_spurious[L7_NUM_VECTORS];
    uint64_t rx_pace_holds;
    uint64_t tx_pace_holds;
    uint64_t rx_fault_holds;
    uint64_t fault_fired[L7F_NUM];
    uint64_t rx_fifo_queued[L7_NUM_RX_CH];
    uint64_t rx_fifo_overflow[L7_NUM_RX_CH];
    uint64_t rx_fifo_peak_bytes[L7_NUM_RX_CH];
    uint64_t rx_fifo_flushed;
    uint64_t rx_drop_fifo_reset;
    uint64_t tx_pause_frames;
    uint64_t rx_pause_holds;
    uint64_t desc_tail_errors;
    uint64_t rx_wb_flushes[L7_NUM_RX_CH];
    uint64_t rx_wb_flush_why[6];
    uint64_t rx_wb_batched_desc;
    uint64_t async_started[L7A_KINDS];
    uint64_t async_busy_reads[L7A_KINDS];
} L7Counters;

typedef struct L7Phy {
    uint16_t bmcr;
    uint16_t adv;
    uint16_t ctrl1000;
    uint16_t int_mask;
    uint16_t page;
    uint16_t ext[5][16];       /* pages 0,1,2,3 and TR (0x52B5), regs 16-31 */
    uint16_t mmd_ctrl;
    uint16_t mmd_addr;
    uint32_t mmd_key[L7_MMD_SLOTS];
    uint16_t mmd_val[L7_MMD_SLOTS];
    int mmd_used;
} L7Phy;

struct Lan7430State {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    NICState *nic;
    NICConf conf;

    /* properties */
    uint32_t id_rev;
    uint32_t int_mod_unit_ns;
    bool use_msix;
    uint32_t rate_mbps;          /* wire pacing, 0 = unpaced */
    uint32_t rate_burst_us;      /* how far frames may run ahead of the wire */
    uint32_t rate_catchup_us;    /* wire time lost to late timers made up */
    uint32_t rx_fifo_kib;        /* per-channel RX FIFO size */
    uint32_t peer_pause;         /* link partner honours pause frames */
    uint32_t async_us[L7A_KINDS]; /* duration of each kind of operation */
    uint32_t desc_check;         /* out-of-range tails raise DMAC errors */
    uint32_t rx_wb_batch;        /* honour RX_CFG_A write-back batching */

    /* fault injection (QOM properties, settable at runtime) */
    L7Fault fault[L7F_NUM];
    uint32_t fault_wb_delay_us;
    uint32_t fault_rx_stall_ms;
    uint32_t fault_irq_vectors;  /* bit mask, round robin */
    uint32_t fault_irq_period_us;
    uint32_t fault_flap_period_ms;
    uint32_t fault_flap_down_ms;
    int fault_irq_next;
    QEMUTimer *fault_irq_timer;
    QEMUTimer *flap_tick_timer;
    QEMUTimer *flap_up_timer;
    bool flap_down;              /* link held down by the link-flap fault */
    QEMUTimer *rx_stall_timer;
    bool rx_stalled;
    QEMUTimer *wb_timer;
    L7WbPending wb;

    /* pacing: virtual time at which each direction of the wire is free */
    int64_t tx_wire_free;
    int64_t rx_wire_free;
    bool tx_backlog;             /* frames waited for the wire */
    bool rx_backlog;
    bool rx_reserved;            /* held RX frame has its wire slot booked */
    int64_t rx_held_due;
    /* TX FIFO: one fetched frame (or TSO chain) waiting for the wire */
    bool tx_held;
    int64_t tx_held_due;
    size_t tx_held_len;
    uint32_t tx_held_d0;
    uint32_t tx_held_mss;
    bool tx_held_lso;
    QEMUTimer *tx_pace_timer;
    QEMUTimer *rx_pace_timer;

    uint32_t regs[L7_NREGS];     /* plain storage for simple registers */

    /* interrupt controller */
    uint32_t int_sts;            /* latched non-DMA sources (SW_GP, ...) */
    uint32_t int_en;
    uint32_t vec_en;
    uint32_t vec_auto_clr;
    uint32_t vec_map[3];
    uint32_t mod_map[3];
    uint32_t mod_cfg[L7_INT_MOD_NUM];
    uint32_t vec_asserted;       /* edge state per vector */
    int64_t vec_last_fire[L7_NUM_VECTORS];
    QEMUTimer *mod_timer[L7_NUM_VECTORS];
    bool intx_level;

    /* DMA controller */
    uint32_t dmac_int_sts;
    uint32_t dmac_int_en;
    uint32_t dmac_run;           /* START_x bits as last commanded */
    uint32_t dmac_stop;          /* STOP_x bits */
    uint32_t rx_head[L7_NUM_RX_CH];
    uint32_t rx_tail[L7_NUM_RX_CH];
    uint32_t tx_head[L7_NUM_TX_CH];
    uint32_t tx_tail[L7_NUM_TX_CH];
    uint32_t fct_rx_en;
    uint32_t fct_tx_en;
    uint32_t fct_int_sts;
    L7RxFifo rxf[L7_NUM_RX_CH];
    uint32_t pause_ch;           /* channels whose FIFO level sent XOFF */
    int64_t op_due[L7O_NUM];     /* operation in progress until, 0 = idle */
    QEMUTimer *op_timer;
    /* RX descriptor write-backs batched per RX_CFG_A (rx-wb-batch) */
    L7WbPending rxb[L7_NUM_RX_CH];
    int rxb_descs[L7_NUM_RX_CH];
    int64_t rxb_due[L7_NUM_RX_CH];
    QEMUTimer *rxb_timer;

    /* MAC */
    uint32_t mac_rx;
    uint32_t mac_tx;
    uint32_t dp_ram[256];

    /* PTP: clock = virtual clock + offset */
    int64_t ptp_offset_ns;
    bool ptp_enabled;

    L7Phy phy;
    bool bmsr_link_latched_low;  /* BMSR link status is latched low */

    bool rx_blocked;
    bool tx_waiting;            /* peer queue full: wait for sent callback */
    QEMUBH *tx_bh;
    uint8_t rxbuf[L7_RXBUF_MAX + 64];
    uint8_t *txbuf;
    uint8_t *segbuf;

    L7Counters cnt;
};

/* ------------------------------------------------------------------------ */
/* helpers                                                                   */

static inline uint32_t l7_reg(Lan7430State *s, hwaddr off)
{
    return s->regs[off >> 2];
}

static inline void l7_stat_add(Lan7430State *s, hwaddr off, uint32_t v)
{
    s->regs[off >> 2] += v;
}

static uint64_t l7_addr64(Lan7430State *s, hwaddr hi, hwaddr lo)
{
    return ((uint64_t)l7_reg(s, hi) << 32) | l7_reg(s, lo);
}

static unsigned l7_desc_space(Lan7430State *s)
{
    return 16u << (l7_reg(s, L7_DMAC_CFG) & 3);
}

static void l7_dma_read(Lan7430State *s, dma_addr_t a, void *buf, dma_addr_t len,
                        bool desc)
{
    pci_dma_read(PCI_DEVICE(s), a, buf, len);
    if (desc) {
        s->cnt.dma_desc_read_bytes += len;
    } else {
        s->cnt.dma_data_read_bytes += len;
    }
}

static void l7_dma_write(Lan7430State *s, dma_addr_t a, const void *buf,
                         dma_addr_t len, bool desc)
{
    pci_dma_write(PCI_DEVICE(s), a, buf, len);
    if (desc) {
        s->cnt.dma_desc_write_bytes += len;
    } else {
        s->cnt.dma_data_write_bytes += len;
    }
}

static bool l7_link_up(Lan7430State *s)
{
    NetClientState *nc = qemu_get_queue(s->nic);
    return !nc->link_down && !(s->phy.bmcr & 0x0800) && !s->flap_down;
}

/* does fault f fire on this opportunity? counts it if so */
static bool l7_fault_hit(Lan7430State *s, int f)
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

static bool l7_fault_armed(Lan7430State *s, int f)
{
    return s->fault[f].count || s->fault[f].every;
}

/* time one frame (without FCS) occupies the wire at rate_mbps */
static int64_t l7_wire_ns(Lan7430State *s, size_t len)
{
    /* preamble+SFD 8, FCS 4, IFG 12; minimum frame 64 incl. FCS */
    uint64_t bytes = MAX(len + 4, 64) + 8 + 12;

    return bytes * 8 * 1000 / s->rate_mbps;
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
static int64_t l7_wire_book(Lan7430State *s, int64_t *free, bool backlog,
                            int64_t ns)
{
    *free = l7_wire_start(s, *free, backlog) + ns;
    return *free - (int64_t)s->rate_burst_us * 1000;
}

/* ------------------------------------------------------------------------ */
/* interrupts                                                                */

static uint32_t l7_int_sts(Lan7430State *s)
{
    uint32_t sts = s->int_sts & ~(L7_INT_BIT_ALL_RX | L7_INT_BIT_ALL_TX |
                                  L7_INT_BIT_MAS);
    uint32_t d = s->dmac_int_sts & s->dmac_int_en;
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (d & L7_DMAC_INT_RXFRM(ch)) {
            sts |= L7_INT_BIT_DMA_RX(ch);
        }
    }
    for (ch = 0; ch < L7_NUM_TX_CH; ch++) {
        if (d & L7_DMAC_INT_TX_IOC(ch)) {
            sts |= L7_INT_BIT_DMA_TX(ch);
        }
    }
    if (sts & s->int_en & ~L7_INT_BIT_MAS) {
        sts |= L7_INT_BIT_MAS;
    }
    return sts;
}

/* vector / moderation slot for one source bit */
static unsigned l7_src_nibble(const uint32_t map[3], int bit)
{
    if (bit >= 24 && bit < 28) {
        return (map[0] >> ((bit - 24) * 4)) & 0xF;
    }
    if (bit >= 16 && bit < 20) {
        return (map[1] >> ((bit - 16) * 4)) & 0xF;
    }
    /* all other sources (SW_GP, 1588) use INT_*_MAP2 bits 3:0 */
    return map[2] & 0xF;
}

static int64_t l7_mod_interval_ns(Lan7430State *s, uint32_t srcs)
{
    int64_t best = 0;
    int bit;

    for (bit = 1; bit < 32; bit++) {
        if (srcs & (1u << bit)) {
            unsigned slot = l7_src_nibble(s->mod_map, bit);
            if (slot < L7_INT_MOD_NUM) {
                int64_t v = (int64_t)(s->mod_cfg[slot] & 0xFFFF) *
                            s->int_mod_unit_ns;
                best = MAX(best, v);
            }
        }
    }
    return best;
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
    for (ch = 0; ch < L7_NUM_TX_CH; ch++) {
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

static void l7_update_irq(Lan7430State *s)
{
    PCIDevice *d = PCI_DEVICE(s);
    bool msix = msix_enabled(d);
    bool msi = !msix && msi_enabled(d);
    int pass;

    for (pass = 0; pass < 4; pass++) {
        uint32_t sts = l7_int_sts(s);
        uint32_t pending = sts & s->int_en & ~L7_INT_BIT_MAS;
        uint32_t vec_pending[L7_NUM_VECTORS] = { 0 };
        bool again = false;
        int bit, v;

        if (!(s->int_en & L7_INT_BIT_MAS)) {
            pending = 0;
        }
        for (bit = 1; bit < 32; bit++) {
            if (pending & (1u << bit)) {
                v = l7_src_nibble(s->vec_map, bit) & (L7_NUM_VECTORS - 1);
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
            }
            s->intx_level = level;
            pci_set_irq(d, level);
            return;
        }
        if (s->intx_level) {
            s->intx_level = false;
            pci_set_irq(d, 0);
        }

        for (v = 0; v < L7_NUM_VECTORS; v++) {
            uint32_t vbit = 1u << v;
            bool asserted = vec_pending[v] && (s->vec_en & vbit);
            int64_t now, ival;

            if (!asserted) {
                s->vec_asserted &= ~vbit;
                continue;
            }
            if (s->vec_asserted & vbit) {
                continue;       /* edge already signalled */
            }
            now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
            ival = l7_mod_interval_ns(s, vec_pending[v]);
            if (ival && now < s->vec_last_fire[v] + ival) {
                if (!timer_pending(s->mod_timer[v])) {
                    timer_mod(s->mod_timer[v], s->vec_last_fire[v] + ival);
                    s->cnt.irq_moderated++;
                    trace_lan743x_irq_deferred(v, s->vec_last_fire[v] + ival);
                }
                continue;
            }
            /* rising edge: send the message */
            s->vec_asserted |= vbit;
            s->vec_last_fire[v] = now;
            s->cnt.irq_vec[v]++;
            trace_lan743x_irq(v, vec_pending[v]);
            if (s->vec_auto_clr & vbit) {
                s->vec_en &= ~vbit;
            }
            l7_fire_auto_clear(s, vec_pending[v]);
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

static void l7_mod_timer_cb(void *opaque)
{
    l7_update_irq(opaque);
}

/* ------------------------------------------------------------------------ */
/* PHY (LAN88xx compatible, c22 with indirect MMD and page select)           */

static void l7_phy_reset(Lan7430State *s)
{
    L7Phy *p = &s->phy;

    p->bmcr = 0x1140;            /* autoneg enable, full duplex, 1000 */
    p->adv = 0x01E1;
    p->ctrl1000 = 0x0300;
    p->int_mask = 0;
    p->page = 0;
    memset(p->ext, 0, sizeof(p->ext));
    p->mmd_ctrl = 0;
    p->mmd_addr = 0;
}

static int l7_phy_page_idx(uint16_t page)
{
    if (page <= 3) {
        return page;
    }
    if (page == 0x52B5) {
        return 4;
    }
    return -1;
}

static uint16_t *l7_phy_mmd_slot(L7Phy *p, int devad, uint16_t reg, bool create)
{
    uint32_t key = ((uint32_t)devad << 16) | reg;
    int i;

    for (i = 0; i < p->mmd_used; i++) {
        if (p->mmd_key[i] == key) {
            return &p->mmd_val[i];
        }
    }
    if (!create || p->mmd_used >= L7_MMD_SLOTS) {
        return NULL;
    }
    p->mmd_key[p->mmd_used] = key;
    p->mmd_val[p->mmd_used] = 0;
    return &p->mmd_val[p->mmd_used++];
}

static uint16_t l7_phy_read(Lan7430State *s, int reg)
{
    L7Phy *p = &s->phy;
    bool link = l7_link_up(s);
    bool an = p->bmcr & 0x1000;
    int pi;

    switch (reg) {
    case 0:
        return p->bmcr;
    case 1: {
        /* link status latches low (802.3 22.2.4.2.13): a flap is seen */
        bool l = link && !s->bmsr_link_latched_low;

        s->bmsr_link_latched_low = false;
        return 0x7949 | (l ? 0x0004 : 0) | ((link && an) ? 0x0020 : 0);
    }
    case 2:
        return L7_PHY_ID1;
    case 3:
        return L7_PHY_ID2;
    case 4:
        return p->adv;
    case 5:
        return (link && an) ? 0xC5E1 : 0;
    case 6:
        return (link && an) ? 0x0001 : 0;
    case 9:
        return p->ctrl1000;
    case 10:
        return (link && an) ? 0x3800 : 0;
    case 13:
        return p->mmd_ctrl;
    case 14:
        if (p->mmd_ctrl & 0xC000) {
            int devad = p->mmd_ctrl & 0x1F;
            uint16_t *v = l7_phy_mmd_slot(p, devad, p->mmd_addr, false);
            uint16_t r = v ? *v : 0;
            if ((p->mmd_ctrl & 0xC000) != 0x4000) {
                p->mmd_addr++;  /* post increment modes */
            }
            return r;
        }
        return p->mmd_addr;
    case 15:
        return 0x3000;
    case 31:
        return p->page;
    default:
        break;
    }
    if (reg >= 16) {
        pi = l7_phy_page_idx(p->page);
        if (pi == 0 && reg == 0x19) {
            return p->int_mask;
        }
        if (pi == 0 && reg == 0x1A) {
            return 0;           /* INT_STS: nothing pending, read clears */
        }
        if (pi >= 0) {
            return p->ext[pi][reg - 16];
        }
    }
    return 0;
}

static void l7_phy_write(Lan7430State *s, int reg, uint16_t val)
{
    L7Phy *p = &s->phy;
    int pi;

    switch (reg) {
    case 0:
        if (val & 0x8000) {
            l7_phy_reset(s);
            return;
        }
        p->bmcr = val & ~0x0200;    /* restart autoneg completes at once */
        return;
    case 4:
        p->adv = val;
        return;
    case 9:
        p->ctrl1000 = val;
        return;
    case 13:
        p->mmd_ctrl = val;
        return;
    case 14:
        if (p->mmd_ctrl & 0xC000) {
            uint16_t *v = l7_phy_mmd_slot(p, p->mmd_ctrl & 0x1F, p->mmd_addr,
                                          true);
            if (v) {
                *v = val;
            }
            if ((p->mmd_ctrl & 0xC000) == 0xC000) {
                p->mmd_addr++;
            }
        } else {
            p->mmd_addr = val;
        }
        return;
    case 31:
        p->page = val;
        return;
    default:
        break;
    }
    if (reg >= 16) {
        pi = l7_phy_page_idx(p->page);
        if (pi == 0 && reg == 0x19) {
            p->int_mask = val;
            return;
        }
        if (pi >= 0) {
            /* TR page control (reg 16): bit 15 reads back as "done" */
            p->ext[pi][reg - 16] = val;
        }
    }
}

static void l7_mii_access(Lan7430State *s, uint32_t acc)
{
    int phy = (acc >> L7_MII_ACC_PHY_SHIFT) & 0x1F;
    int reg = (acc >> L7_MII_ACC_REG_SHIFT) & 0x1F;
    bool wr = acc & L7_MII_ACC_WRITE;
    uint16_t val;

    if (acc & L7_MII_ACC_CL45) {
        /* No clause 45 devices on the LAN7430 MDIO bus */
        if (!wr) {
            s->regs[L7_MAC_MII_DATA >> 2] = 0xFFFF;
        }
        return;
    }
    if (phy != L7_PHY_ADDR) {
        if (!wr) {
            s->regs[L7_MAC_MII_DATA >> 2] = 0xFFFF;
        }
        trace_lan743x_mdio(wr, phy, reg, 0xFFFF);
        return;
    }
    if (wr) {
        val = l7_reg(s, L7_MAC_MII_DATA) & 0xFFFF;
        l7_phy_write(s, reg, val);
    } else {
        val = l7_phy_read(s, reg);
        s->regs[L7_MAC_MII_DATA >> 2] = val;
    }
    trace_lan743x_mdio(wr, phy, reg, val);
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

static void l7_wb_cancel(Lan7430State *s, int ch);
static void l7_rx_batch_discard(Lan7430State *s, int ch);

static void l7_dma_rx_reset(Lan7430State *s, int ch)
{
    l7_wb_cancel(s, ch);
    l7_rx_batch_discard(s, ch);
    s->rx_head[ch] = 0;
    s->rx_tail[ch] = 0;
    s->dmac_run &= ~L7_DMAC_CMD_START_R(ch);
    s->dmac_stop &= ~L7_DMAC_CMD_STOP_R(ch);
    s->dmac_int_sts &= ~L7_DMAC_INT_RXFRM(ch);
    s->regs[L7_RX_CFG_A(ch) >> 2] = 0;
    s->regs[L7_RX_CFG_B(ch) >> 2] = 0;
    s->regs[L7_RX_CFG_C(ch) >> 2] = 0;
}

static void l7_dma_tx_reset(Lan7430State *s, int ch)
{
    s->tx_held = false;
    s->tx_head[ch] = 0;
    s->tx_tail[ch] = 0;
    s->dmac_run &= ~L7_DMAC_CMD_START_T(ch);
    s->dmac_stop &= ~L7_DMAC_CMD_STOP_T(ch);
    s->dmac_int_sts &= ~L7_DMAC_INT_TX_IOC(ch);
    s->regs[L7_TX_CFG_A(ch) >> 2] = 0;
    s->regs[L7_TX_CFG_B(ch) >> 2] = 0;
    s->regs[L7_TX_CFG_C(ch) >> 2] = 0;
}

static void l7_dmac_reset(Lan7430State *s)
{
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        l7_dma_rx_reset(s, ch);
    }
    for (ch = 0; ch < L7_NUM_TX_CH; ch++) {
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

static void l7_stats_reset(Lan7430State *s)
{
    memset(&s->regs[L7_STAT_FIRST >> 2], 0,
           (L7_STAT_LAST - L7_STAT_FIRST + 4));
}

static void l7_rx_kick(Lan7430State *s);
static void l7_rx_fifo_flush(Lan7430State *s, int ch, bool disable);

/* Light reset: everything in the CSR space except PCI config and counters */
static void l7_soft_reset(Lan7430State *s)
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
    for (v = 0; v < L7_NUM_VECTORS; v++) {
        s->vec_last_fire[v] = 0;
        if (s->mod_timer[v]) {
            timer_del(s->mod_timer[v]);
        }
    }
    l7_dmac_reset(s);
    s->fct_rx_en = 0;
    s->fct_tx_en = 0;
    s->fct_int_sts = 0;
    memset(s->op_due, 0, sizeof(s->op_due));
    if (s->op_timer) {
        timer_del(s->op_timer);
    }
    s->pause_ch = 0;            /* no XON on a reset */
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

/* ------------------------------------------------------------------------ */
/* frame parsing / checksums                                                 */

typedef struct L7Parse {
    int l3off;
    int l4off;
    int l4proto;        /* -1 when unknown */
    bool v4;
    bool v6;
    bool frag;
} L7Parse;

static void l7_parse(const uint8_t *p, size_t len, L7Parse *r)
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

static void l7_ipv4_csum(uint8_t *p, const L7Parse *r)
{
    uint8_t *ip = p + r->l3off;
    int ihl = (ip[0] & 0xF) * 4;

    stw_be_p(ip + 10, 0);
    stw_be_p(ip + 10, net_checksum_finish(net_checksum_add(ihl, ip)));
}

/* fill in the TCP/UDP checksum of a complete frame */
static void l7_l4_csum(uint8_t *p, size_t len, const L7Parse *r)
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

static void l7_stat_frame(Lan7430State *s, bool rx, const uint8_t *p,
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
           !(s->dmac_stop & L7_DMAC_CMD_STOP_R(ch)) &&
           (PCI_DEVICE(s)->config[PCI_COMMAND] & PCI_COMMAND_MASTER) &&
           (l7_reg(s, L7_RX_CFG_B(ch)) & L7_RX_CFG_B_RING_LEN_MASK) > 1;
}

static bool l7_rx_enabled(Lan7430State *s)
{
    return (s->mac_rx & L7_MAC_RX_RXEN) && l7_link_up(s);
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

static int l7_rss_channel(Lan7430State *s, const uint8_t *p, size_t len)
{
    uint32_t cfg = l7_reg(s, L7_RFE_RSS_CFG);
    uint8_t in[36];
    int n = 0, bits, idx;
    bool ports = false;
    L7Parse r;
    uint32_t h, indx;

    if (!(cfg & L7_RSS_ENABLE) || !(cfg & L7_RSS_QUEUE_ENABLE)) {
        return 0;
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
            return 0;
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
            return 0;
        }
        memcpy(in, p + r.l3off + 8, 32);
        n = 32;
    } else {
        return 0;
    }
    if (ports) {
        memcpy(in + n, p + r.l4off, 4);
        n += 4;
    }
    h = l7_toeplitz(s, in, n);
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

static int64_t l7_ptp_now(Lan7430State *s)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + s->ptp_offset_ns;
}

static bool lan7430_can_receive(NetClientState *nc)
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

static void l7_rx_head_wb(Lan7430State *s, int ch, uint32_t idx)
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
    return l7_rss_channel(s, f, len);
}

#define L7_RX_MAX_DESCS     64

/*
 * Find enough hardware-owned descriptors between head and tail of channel
 * ch for need bytes (+ an extension descriptor when ts): their indices in
 * descs[*nd] (the extension one at descs[*nd]), the next head in *idx, the
 * buffer bytes in *got.  Returns 1 when found, 0 when the ring has none
 * now, -1 when the frame can never fit (dropped, counted).
 */
static int l7_rx_find_descs(Lan7430State *s, int ch, uint32_t need,
                            uint32_t pad, bool ts, uint32_t *descs, int *nd,
                            uint32_t *idx, uint32_t *got, size_t size)
{
    uint32_t ring = l7_reg(s, L7_RX_CFG_B(ch)) & L7_RX_CFG_B_RING_LEN_MASK;
    uint64_t base = l7_addr64(s, L7_RX_BASE_ADDRH(ch), L7_RX_BASE_ADDRL(ch));
    unsigned sp = l7_desc_space(s);
    uint32_t tail = s->rx_tail[ch] % ring;
    uint32_t d0;

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
        if (!(d0 & L7_RXD0_OWN) || (d0 & L7_RXD0_BUF_LEN_MASK) <= pad) {
            return 0;
        }
        descs[(*nd)++] = *idx;
        *got += d0 & L7_RXD0_BUF_LEN_MASK;  /* pad counted in need */
        *idx = (*idx + 1) % ring;
    }
    if (ts) {
        if (*idx == tail) {
            return 0;
        }
        l7_dma_read(s, base + (uint64_t)*idx * sp, &d0, 4, true);
        if (!(le32_to_cpu(d0) & L7_RXD0_OWN)) {
            return 0;
        }
        descs[*nd] = *idx;      /* extension descriptor */
        *idx = (*idx + 1) % ring;
    }
    return 1;
}

/*
 * Batched descriptor write-back (property rx-wb-batch, default 0 = every
 * frame written back at once).  With it, RX_CFG_A as the driver programs
 * it (Microchip's 2017 lan743x.h names the fields): WB_THRES (28:24)
 * descriptors are written back together, with the head write-back and
 * RXFRM; WB_ON_INT_TMR (30) writes back what is pending when the
 * channel's interrupt moderation interval (INT_MOD_CFG, absolute from the
 * first pending frame) has elapsed; WB_SWFLUSH (31, self-clearing) writes
 * back at once.  A stop that completes writes back; a channel reset
 * discards.  Without the timer bit, or a zero interval, a frame below the
 * threshold is written back at once (assumption).
 */
enum { L7B_THRES, L7B_TIMER, L7B_SWFLUSH, L7B_STOP, L7B_FULL, L7B_ORDER,
       L7B_NUM };
QEMU_BUILD_BUG_ON(L7B_NUM != ARRAY_SIZE(((L7Counters *)0)->rx_wb_flush_why));
static const char *const l7_batch_why[L7B_NUM] = {
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
static void l7_rx_batch_flush(Lan7430State *s, int ch, int why)
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
    l7_rx_head_wb(s, ch, b->head_idx);
    s->dmac_int_sts |= L7_DMAC_INT_RXFRM(ch);
    l7_update_irq(s);
}

/* channel reset: pending write-backs are void */
static void l7_rx_batch_discard(Lan7430State *s, int ch)
{
    s->rxb[ch].active = false;
    s->rxb[ch].n = 0;
    s->rxb_descs[ch] = 0;
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

    s->rxb[ch].active = true;
    s->rxb[ch].head_idx = head;
    s->rxb_descs[ch] += ndesc;
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

static void l7_rx_batch_timer_cb(void *opaque)
{
    Lan7430State *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (s->rxb_due[ch] && s->rxb_due[ch] <= now) {
            s->rxb_due[ch] = 0;
            l7_rx_batch_flush(s, ch, L7B_TIMER);
        }
    }
    l7_rx_batch_rearm(s);
}

/*
 * RX DMA: write one frame into channel ch's ring.  Returns 1 when written,
 * 0 when the ring has no usable descriptors now (nothing changed), -1 when
 * the frame can never fit (dropped, counted).
 */
static int l7_rx_dma(Lan7430State *s, int ch, const uint8_t *buf,
                     size_t size)
{
    uint8_t *f = s->rxbuf;
    uint32_t flen, pad, idx, got, crc, st, rep_len;
    bool f_drop_fs, f_drop_ls, f_wb_desc, f_wb_head, f_ext_missing, batch;
    L7WbPending *wq;
    unsigned sp = l7_desc_space(s);
    uint64_t base;
    bool ts;
    int nd, i;
    size_t len = size;
    uint32_t descs[L7_RX_MAX_DESCS];

    memcpy(f, buf, len);
    if (len < 60) {
        memset(f + len, 0, 60 - len);
        len = 60;
    }
    flen = len + 4;

    /* FCS */
    crc = crc32(0, f, len);
    stl_le_p(f + len, crc);

    base = l7_addr64(s, L7_RX_BASE_ADDRH(ch), L7_RX_BASE_ADDRL(ch));
    pad = (l7_reg(s, L7_RX_CFG_B(ch)) & L7_RX_CFG_B_PAD_MASK) >>
          L7_RX_CFG_B_PAD_SHIFT;
    ts = l7_rx_ts_wanted(s, ch, f, len);

    switch (l7_rx_find_descs(s, ch, flen + pad, pad, ts, descs, &nd, &idx,
                             &got, size)) {
    case 0:
        return 0;
    case -1:
        return -1;
    }

    /* faults on this frame's write-back */
    {
        bool f_short = l7_fault_hit(s, L7F_RX_LEN_SHORT);
        bool f_long = l7_fault_hit(s, L7F_RX_LEN_LONG);
        bool f_zero = l7_fault_hit(s, L7F_RX_LEN_ZERO);

        f_drop_fs = l7_fault_hit(s, L7F_DROP_FS);
        f_drop_ls = l7_fault_hit(s, L7F_DROP_LS);
        f_ext_missing = l7_fault_hit(s, L7F_EXT_MISSING);
        f_wb_desc = l7_fault_hit(s, L7F_WB_DELAY_DESC);
        f_wb_head = !f_wb_desc && l7_fault_hit(s, L7F_WB_DELAY_HEAD);
        rep_len = flen;
        if (f_zero) {
            rep_len = 0;
        } else if (f_long) {
            rep_len = MIN(got + 1024, L7_RXD0_FRAME_LEN_MASK >>
                                      L7_RXD0_FRAME_LEN_SHIFT);
        } else if (f_short) {
            rep_len = flen / 2;
        }
        if (rep_len != flen) {
            trace_lan743x_fault_rx_len(ch, flen, rep_len);
        }
        if (f_drop_fs) {
            trace_lan743x_fault_rx_flag(ch, "FS");
        }
        if (f_drop_ls) {
            trace_lan743x_fault_rx_flag(ch, "LS");
        }
        if (f_ext_missing) {
            /*
             * EXT set in the last descriptor, but no extension
             * descriptor written: the next frame starts right after it
             * (a reserved extension descriptor is left to that frame).
             */
            trace_lan743x_fault_rx_flag(ch, "extension descriptor");
            if (ts) {
                idx = descs[nd];
                ts = false;
            }
        }
        if (f_wb_desc || f_wb_head) {
            s->wb.active = true;
            s->wb.head = f_wb_head;
            s->wb.ch = ch;
            s->wb.n = 0;
            timer_mod(s->wb_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                      (int64_t)s->fault_wb_delay_us * 1000);
            trace_lan743x_fault_wb_delay(ch, f_wb_head ? "head" : "descriptor",
                                         s->fault_wb_delay_us);
        }
    }

    /* descriptor write-backs: now, held by a fault, or batched */
    batch = !f_wb_desc && !f_wb_head && l7_rx_wb_batched(s, ch);
    if (batch && s->rxb[ch].n + 2 * nd + 3 > L7_WB_MAX_WRITES) {
        l7_rx_batch_flush(s, ch, L7B_FULL);
    } else if (!batch && s->rxb[ch].active) {
        l7_rx_batch_flush(s, ch, L7B_ORDER);    /* keep the order */
    }
    wq = f_wb_desc ? &s->wb : batch ? &s->rxb[ch] : NULL;

    /* copy data and write back descriptors */
    st = l7_rx_csum_status(s, f, len);
    if (st & (L7_RXD1_ICE | L7_RXD1_TCE)) {
        s->cnt.rx_csum_errors++;
    } else if (st & L7_RXD1_ICSM) {
        s->cnt.rx_csum_unchecked++;
    } else {
        s->cnt.rx_csum_verified++;
    }
    {
        uint32_t off = 0;
        for (i = 0; i < nd; i++) {
            uint32_t d[4], blen, chunk, skip;
            uint64_t a = base + (uint64_t)descs[i] * sp;
            bool last = (i == nd - 1);

            l7_dma_read(s, a, d, 16, true);
            blen = le32_to_cpu(d[0]) & L7_RXD0_BUF_LEN_MASK;
            skip = (i == 0) ? pad : 0;
            chunk = MIN(blen - skip, flen - off);
            l7_dma_write(s, (((uint64_t)le32_to_cpu(d[2])) << 32 |
                             le32_to_cpu(d[1])) + skip, f + off, chunk, false);
            off += chunk;
            d[0] = blen | ((i == 0 && !f_drop_fs) ? L7_RXD0_FS : 0);
            if (last) {
                d[0] |= (f_drop_ls ? 0 : L7_RXD0_LS) |
                        (rep_len << L7_RXD0_FRAME_LEN_SHIFT) |
                        ((ts || f_ext_missing) ? L7_RXD0_EXT : 0);
                l7_rx_desc_wr32(s, a + 4, st, wq);
            }
            l7_rx_desc_wr32(s, a, d[0], wq);
            s->cnt.rx_desc_consumed[ch]++;
            s->cnt.rx_desc_written[ch]++;
        }
        if (ts) {
            uint64_t a = base + (uint64_t)descs[nd] * sp;
            int64_t now = l7_ptp_now(s);

            l7_rx_desc_wr32(s, a + 4, now / NANOSECONDS_PER_SECOND, wq);
            l7_rx_desc_wr32(s, a + 8, now % NANOSECONDS_PER_SECOND, wq);
            l7_rx_desc_wr32(s, a, L7_RXD0_EXT, wq);
            s->cnt.rx_desc_consumed[ch]++;
            s->cnt.rx_desc_written[ch]++;
        }
    }
    s->rx_head[ch] = idx;
    s->cnt.rx_frames++;
    s->cnt.rx_frames_ch[ch]++;
    s->cnt.rx_bytes += size;
    l7_stat_frame(s, true, f, flen);
    trace_lan743x_rx_frame(ch, flen, nd, idx);
    if (f_wb_head) {
        s->wb.head_idx = idx;   /* head write-back + interrupt held back */
    } else if (batch) {
        l7_rx_batch_add(s, ch, nd + (ts ? 1 : 0), idx);
    } else {
        l7_rx_head_wb(s, ch, idx);
        s->dmac_int_sts |= L7_DMAC_INT_RXFRM(ch);
        l7_update_irq(s);
    }
    if (l7_fault_hit(s, L7F_RX_STALL)) {
        s->rx_stalled = true;
        timer_mod(s->rx_stall_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  (int64_t)s->fault_rx_stall_ms * SCALE_MS);
        trace_lan743x_fault_rx_stall(s->fault_rx_stall_ms);
    }
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
 * Flow control: with MAC_FLOW.TX_FCEN and FCT_FLOW(ch).REQ_EN the MAC
 * sends a pause frame (XOFF, pause time FCPT) when the channel's FIFO
 * level reaches ON, and a zero pause frame (XON) once every paused
 * channel's level is back at or below OFF.  Both counted in
 * STAT_TX_PAUSE_FRAMES.  A pause stops the whole link.
 */
static void l7_rx_pause_update(Lan7430State *s, int ch)
{
    uint32_t flow = l7_reg(s, L7_FCT_FLOW(ch));
    uint32_t on = (flow & L7_FCT_FLOW_ON_MASK) * L7_FCT_FLOW_UNIT;
    uint32_t off = ((flow & L7_FCT_FLOW_OFF_MASK) >> L7_FCT_FLOW_OFF_SHIFT) *
                   L7_FCT_FLOW_UNIT;
    bool fc = (l7_reg(s, L7_MAC_FLOW) & L7_MAC_FLOW_TX_FCEN) &&
              (flow & L7_FCT_FLOW_REQ_EN) && on;
    uint32_t was = s->pause_ch;

    if (fc && s->rxf[ch].used >= on) {
        s->pause_ch |= 1u << ch;
    } else if (!fc || s->rxf[ch].used <= off) {
        s->pause_ch &= ~(1u << ch);
    }
    if (!was != !s->pause_ch) {
        l7_stat_add(s, L7_STAT_TX_PAUSE_FRAMES, 1);
        s->cnt.tx_pause_frames++;
        trace_lan743x_rx_pause(ch, s->pause_ch != 0, s->rxf[ch].used);
    }
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

/* move frames from channel ch's FIFO into its ring while it takes them */
static void l7_rx_fifo_drain(Lan7430State *s, int ch)
{
    L7RxFifo *q = &s->rxf[ch];
    L7RxFifoEnt *e;

    while ((e = QSIMPLEQ_FIRST(&q->q)) && l7_rx_dma_ready(s, ch) &&
           !s->rx_stalled && !s->wb.active) {
        if (l7_rx_dma(s, ch, e->data, e->len) == 0) {
            break;              /* ring full: stays in the FIFO */
        }
        QSIMPLEQ_REMOVE_HEAD(&q->q, next);
        q->used -= l7_fifo_bytes(e->len);
        q->frames--;
        g_free(e);
    }
    l7_rx_pause_update(s, ch);
}

/* empty channel ch's FIFO: FCT disable (frames dropped) or reset */
static void l7_rx_fifo_flush(Lan7430State *s, int ch, bool disable)
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

static ssize_t lan7430_receive(NetClientState *nc, const uint8_t *buf,
                               size_t size)
{
    Lan7430State *s = qemu_get_nic_opaque(nc);

    if (s->pause_ch && s->peer_pause) {
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
            s->rx_held_due = l7_wire_book(s, &s->rx_wire_free, s->rx_backlog,
                                          l7_wire_ns(s, size));
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
    }
    l7_receive_frame(s, buf, size);
    s->rx_reserved = false;             /* the booked frame went through */
    return size;
}

static void l7_rx_kick(Lan7430State *s)
{
    NetClientState *nc = qemu_get_queue(s->nic);
    int ch;

    /* the FIFOs first: their frames are older than anything QEMU holds */
    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        l7_rx_fifo_drain(s, ch);
    }
    if (!s->rx_blocked || (s->pause_ch && s->peer_pause)) {
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

/* ------------------------------------------------------------------------ */
/* transmit                                                                  */

static void l7_tx_process(Lan7430State *s, int ch);

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

static void l7_tx_bh(void *opaque)
{
    Lan7430State *s = opaque;

    if (s->tx_waiting) {
        s->tx_waiting = false;
        l7_tx_process(s, 0);
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
static int64_t l7_tx_chain_ns(Lan7430State *s, const uint8_t *p, size_t len,
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
    int64_t due;

    if (!s->tx_held) {
        return false;
    }
    due = s->tx_held_due;
    if (s->rate_mbps && due > qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL)) {
        s->tx_backlog = true;
        if (!timer_pending(s->tx_pace_timer)) {
            s->cnt.tx_pace_holds++;
            trace_lan743x_pace("tx", due -
                               qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
        }
        timer_mod(s->tx_pace_timer, due);
        return true;
    }
    s->tx_held = false;
    l7_tx_frame(s, s->txbuf, s->tx_held_len, s->tx_held_d0, s->tx_held_lso,
                s->tx_held_mss);
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

static void l7_tx_process(Lan7430State *s, int ch)
{
    PCIDevice *pd = PCI_DEVICE(s);
    uint32_t ring = l7_reg(s, L7_TX_CFG_B(ch)) & L7_TX_CFG_B_RING_LEN_MASK;
    uint64_t base = l7_addr64(s, L7_TX_BASE_ADDRH(ch), L7_TX_BASE_ADDRL(ch));
    unsigned sp = l7_desc_space(s);
    bool any = false, ioc_any = false;
    int budget = 4096;

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
        any = true;
        if (overflow || len == 0) {
            s->cnt.tx_bad_frames++;
            trace_lan743x_tx_bad("overflow-or-empty", len);
        } else if (s->rate_mbps) {
            s->tx_held = true;
            s->tx_held_due = l7_wire_book(s, &s->tx_wire_free, s->tx_backlog,
                                          l7_tx_chain_ns(s, s->txbuf, len,
                                                         lso, mss));
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
    if (any && (l7_reg(s, L7_TX_CFG_A(ch)) & L7_TX_CFG_A_HP_WB_EN)) {
        uint32_t h = cpu_to_le32(s->tx_head[ch]);
        uint64_t wb = l7_addr64(s, L7_TX_HEAD_WB_ADDRH(ch),
                                L7_TX_HEAD_WB_ADDRL(ch));
        l7_dma_write(s, wb, &h, 4, true);
        s->cnt.tx_head_wb++;
    }
    if (ioc_any) {
        s->dmac_int_sts |= L7_DMAC_INT_TX_IOC(ch);
        l7_update_irq(s);
    }
}

/* ------------------------------------------------------------------------ */
/* pacing and fault injection timers                                         */

static void l7_tx_pace_cb(void *opaque)
{
    Lan7430State *s = opaque;

    l7_tx_process(s, 0);
    l7_update_irq(s);
}

static void l7_rx_pace_cb(void *opaque)
{
    l7_rx_kick(opaque);
}

static void l7_rx_stall_cb(void *opaque)
{
    Lan7430State *s = opaque;

    s->rx_stalled = false;
    trace_lan743x_fault_rx_stall_end();
    l7_rx_kick(s);
}

/* the held-back write-backs of a wb-delay fault arrive */
static void l7_wb_cb(void *opaque)
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
        s->dmac_int_sts |= L7_DMAC_INT_RXFRM(w->ch);
    }
    w->active = false;
    w->n = 0;
    trace_lan743x_fault_wb_done(w->ch, w->head ? "head" : "descriptor");
    l7_update_irq(s);
    l7_rx_kick(s);
}

/* channel ch (or all, ch < 0) was reset: held-back write-backs are void */
static void l7_wb_cancel(Lan7430State *s, int ch)
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
    uint32_t mask = s->fault_irq_vectors & ((1u << L7_NUM_VECTORS) - 1);
    int i, v = 0;

    if (!mask) {
        mask = 1;
    }
    for (i = 0; i < L7_NUM_VECTORS; i++) {
        v = (s->fault_irq_next + i) % L7_NUM_VECTORS;
        if (mask & (1u << v)) {
            break;
        }
    }
    s->fault_irq_next = (v + 1) % L7_NUM_VECTORS;
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

static void l7_fault_irq_tick(void *opaque)
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

static void l7_flap_up_cb(void *opaque)
{
    Lan7430State *s = opaque;

    s->flap_down = false;
    trace_lan743x_fault_link(1, s->fault_flap_down_ms);
    l7_rx_kick(s);
    l7_tx_process(s, 0);
    l7_update_irq(s);
}

static void l7_flap_tick(void *opaque)
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
static void l7_fault_clear(Lan7430State *s)
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
    if (s->wb.active) {
        timer_del(s->wb_timer);
        l7_wb_cb(s);
    }
}


/* ------------------------------------------------------------------------ */
/* operations that take time (QEMU timer), properties *-us                   */

static int l7_op_kind(int op)
{
    if (op < L7O_RX_SWR) {
        return L7A_DMA_STOP;
    }
    if (op <= L7O_DMAC_SWR) {
        return L7A_DMA_RESET;
    }
    if (op < L7O_MAC_RXD) {
        return L7A_FIFO_RESET;
    }
    return L7A_MAC_DIS;
}

static void l7_op_rearm(Lan7430State *s)
{
    int64_t next = INT64_MAX;
    int op;

    for (op = 0; op < L7O_NUM; op++) {
        if (s->op_due[op]) {
            next = MIN(next, s->op_due[op]);
        }
    }
    if (next == INT64_MAX) {
        timer_del(s->op_timer);
    } else {
        timer_mod(s->op_timer, next);
    }
}

/* the operation in slot op has finished: its status bits change now */
static void l7_op_complete(Lan7430State *s, int op)
{
    s->op_due[op] = 0;
    trace_lan743x_async_done(l7_async_names[l7_op_kind(op)], op);
    if (op >= L7O_RX_STOP && op < L7O_TX_STOP) {
        int ch = op - L7O_RX_STOP;

        s->dmac_run &= ~L7_DMAC_CMD_START_R(ch);
        l7_rx_batch_flush(s, ch, L7B_STOP);     /* assumption */
        s->dmac_int_sts |= L7_DMAC_INT_RX_STOP(ch);
    } else if (op >= L7O_TX_STOP && op < L7O_RX_SWR) {
        int ch = op - L7O_TX_STOP;

        s->dmac_run &= ~L7_DMAC_CMD_START_T(ch);
        s->dmac_int_sts |= L7_DMAC_INT_TX_STOP(ch);
    } else if (op == L7O_MAC_RXD) {
        if (!(s->mac_rx & L7_MAC_RX_RXEN)) {
            s->mac_rx |= L7_MAC_RX_RXD;
        }
    } else if (op == L7O_MAC_TXD) {
        if (!(s->mac_tx & L7_MAC_TX_TXEN)) {
            s->mac_tx |= L7_MAC_TX_TXD;
        }
    }
    /* resets: the effect happened at the write, only the busy bit ends */
}

/* start the operation in slot op; it completes after its kind's delay */
static void l7_op_start(Lan7430State *s, int op)
{
    int kind = l7_op_kind(op);
    uint32_t us = s->async_us[kind];

    s->cnt.async_started[kind]++;
    trace_lan743x_async_start(l7_async_names[kind], op, us);
    if (!us) {
        l7_op_complete(s, op);
        return;
    }
    s->op_due[op] = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + (int64_t)us * 1000;
    l7_op_rearm(s);
}

static void l7_op_cancel(Lan7430State *s, int op)
{
    if (s->op_due[op]) {
        s->op_due[op] = 0;
        l7_op_rearm(s);
    }
}

static void l7_op_timer_cb(void *opaque)
{
    Lan7430State *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int op;

    for (op = 0; op < L7O_NUM; op++) {
        if (s->op_due[op] && s->op_due[op] <= now) {
            l7_op_complete(s, op);
        }
    }
    l7_op_rearm(s);
    l7_update_irq(s);
    l7_rx_kick(s);
    l7_tx_process(s, 0);
}

/* a register read that shows an operation still in progress */
static void l7_op_busy_read(Lan7430State *s, int first, int n)
{
    int op;

    for (op = first; op < first + n; op++) {
        if (s->op_due[op]) {
            s->cnt.async_busy_reads[l7_op_kind(op)]++;
            return;
        }
    }
}

/* bits of DMAC_CMD / FCT_*_CTL that read 1 while a reset is in progress */
static uint32_t l7_dmac_cmd_busy(Lan7430State *s)
{
    uint32_t v = 0;
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (s->op_due[L7O_RX_SWR + ch]) {
            v |= L7_DMAC_CMD_RX_SWR(ch);
        }
    }
    for (ch = 0; ch < L7_NUM_TX_CH; ch++) {
        if (s->op_due[L7O_TX_SWR + ch]) {
            v |= L7_DMAC_CMD_TX_SWR(ch);
        }
    }
    if (s->op_due[L7O_DMAC_SWR]) {
        v |= L7_DMAC_CMD_SWR;
    }
    return v;
}

static uint32_t l7_fct_rx_busy(Lan7430State *s)
{
    uint32_t v = 0;
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (s->op_due[L7O_FCT_RX_RST + ch]) {
            v |= L7_FCT_RX_CTL_RESET(ch);
        }
    }
    return v;
}

/* DMAC_CMD write: soft resets, starts and (asynchronous) stops */
static void l7_dmac_cmd_write(Lan7430State *s, uint32_t val)
{
    int ch;

    if (val & L7_DMAC_CMD_SWR) {
        for (ch = L7O_RX_STOP; ch <= L7O_DMAC_SWR; ch++) {
            l7_op_cancel(s, ch);
        }
        l7_dmac_reset(s);
        trace_lan743x_reset("dmac");
        l7_op_start(s, L7O_DMAC_SWR);
        return;
    }
    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (val & L7_DMAC_CMD_RX_SWR(ch)) {
            l7_op_cancel(s, L7O_RX_STOP + ch);
            l7_dma_rx_reset(s, ch);
            l7_op_start(s, L7O_RX_SWR + ch);
        }
        if (val & L7_DMAC_CMD_START_R(ch)) {
            l7_op_cancel(s, L7O_RX_STOP + ch);
            s->dmac_run |= L7_DMAC_CMD_START_R(ch);
            s->dmac_stop &= ~L7_DMAC_CMD_STOP_R(ch);
        }
        if (val & L7_DMAC_CMD_STOP_R(ch)) {
            s->dmac_stop |= L7_DMAC_CMD_STOP_R(ch);
            if (s->dmac_run & L7_DMAC_CMD_START_R(ch)) {
                l7_op_start(s, L7O_RX_STOP + ch);       /* STOP_PENDING */
            }
        }
    }
    for (ch = 0; ch < L7_NUM_TX_CH; ch++) {
        if (val & L7_DMAC_CMD_TX_SWR(ch)) {
            l7_op_cancel(s, L7O_TX_STOP + ch);
            l7_dma_tx_reset(s, ch);
            l7_op_start(s, L7O_TX_SWR + ch);
        }
        if (val & L7_DMAC_CMD_START_T(ch)) {
            l7_op_cancel(s, L7O_TX_STOP + ch);
            s->dmac_run |= L7_DMAC_CMD_START_T(ch);
            s->dmac_stop &= ~L7_DMAC_CMD_STOP_T(ch);
        }
        if (val & L7_DMAC_CMD_STOP_T(ch)) {
            s->dmac_stop |= L7_DMAC_CMD_STOP_T(ch);
            if (s->dmac_run & L7_DMAC_CMD_START_T(ch)) {
                l7_op_start(s, L7O_TX_STOP + ch);
            }
        }
    }
}

/* FCT_RX_CTL write: per channel enable, disable (drops what the FIFO
 * holds) and reset (empties it; frames arriving until it ends are dropped) */
static void l7_fct_rx_write(Lan7430State *s, uint32_t val)
{
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (val & L7_FCT_RX_CTL_RESET(ch)) {
            l7_rx_fifo_flush(s, ch, false);
            s->fct_int_sts &= ~L7_FCT_INT_RDFO(ch);
            l7_op_start(s, L7O_FCT_RX_RST + ch);
        }
        if (val & L7_FCT_RX_CTL_EN(ch)) {
            s->fct_rx_en |= L7_FCT_RX_CTL_EN(ch);
        }
        if (val & L7_FCT_RX_CTL_DIS(ch)) {
            s->fct_rx_en &= ~L7_FCT_RX_CTL_EN(ch);
            l7_rx_fifo_flush(s, ch, true);
        }
    }
}

/*
 * MAC_RX/MAC_TX write (reg = &mac_rx or &mac_tx, dis = RXD/TXD): clearing
 * the enable starts a disable that sets RXD/TXD when it completes; RXD/TXD
 * are write-one-to-clear, and set again by any write that leaves an
 * already completed disable in place.
 */
static void l7_mac_en_write(Lan7430State *s, uint32_t *reg, uint32_t val,
                            uint32_t dis, int op)
{
    uint32_t old = *reg;
    uint32_t dbit = (val & dis) ? 0 : (old & dis);

    if (val & 1) {                      /* RXEN / TXEN */
        l7_op_cancel(s, op);
        *reg = (val & ~dis) | dbit;
    } else if (old & 1) {
        *reg = val & ~dis;              /* disable in progress */
        l7_op_start(s, op);
    } else {
        *reg = (val & ~dis) | (s->op_due[op] ? 0 : dis);
    }
}

/*
 * Descriptor validation: a tail index outside the ring is not wrapped but
 * refused: DMAC_RX/TX_ERR_STS.DESC_TAIL_ERR and DMAC_INT_STS.ERR are set
 * and the tail keeps its old value (property desc-check, 0 = wrap as the
 * older model did).  Returns true when the write was refused.
 */
static bool l7_tail_check(Lan7430State *s, const char *dir, int ch,
                          uint32_t idx, uint32_t ring, hwaddr err_reg)
{
    if (!s->desc_check || !ring || idx < ring) {
        return false;
    }
    s->regs[err_reg >> 2] |= L7_DMAC_ERR_DESC_TAIL;
    s->dmac_int_sts |= L7_DMAC_INT_ERR;
    s->cnt.desc_tail_errors++;
    trace_lan743x_desc_tail_err(dir, ch, idx, ring);
    return true;
}

/* ------------------------------------------------------------------------ */
/* MMIO                                                                      */

static uint64_t lan7430_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    Lan7430State *s = opaque;
    uint32_t val = 0;
    int ch;

    addr &= ~3;
    s->cnt.reg_reads[addr >> 2]++;

    switch (addr) {
    case L7_ID_REV:
        val = s->id_rev;
        break;
    case L7_FPGA_REV:
    case L7_STRAP_READ:
        val = 0;
        break;
    case L7_INT_STS:
        val = l7_int_sts(s);
        break;
    case L7_INT_STS_R2C: {
        uint32_t clr_en = 0;
        val = l7_int_sts(s);
        for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
            uint32_t c = l7_reg(s, L7_RX_CFG_C(ch));
            if (val & L7_INT_BIT_DMA_RX(ch)) {
                if (c & L7_RX_CFG_C_INT_STS_R2C_MODE_MASK) {
                    s->dmac_int_sts &= ~L7_DMAC_INT_RXFRM(ch);
                }
                if (c & L7_RX_CFG_C_INT_EN_R2C) {
                    clr_en |= L7_INT_BIT_DMA_RX(ch);
                }
            }
        }
        for (ch = 0; ch < L7_NUM_TX_CH; ch++) {
            uint32_t c = l7_reg(s, L7_TX_CFG_C(ch));
            if (val & L7_INT_BIT_DMA_TX(ch)) {
                if (c & L7_TX_CFG_C_INT_STS_R2C_MODE_MASK) {
                    s->dmac_int_sts &= ~L7_DMAC_INT_TX_IOC(ch);
                }
                if (c & L7_TX_CFG_C_INT_EN_R2C) {
                    clr_en |= L7_INT_BIT_DMA_TX(ch);
                }
            }
        }
        s->int_sts &= ~val;
        s->int_en &= ~clr_en;
        l7_update_irq(s);
        break;
    }
    case L7_INT_SET:
        val = 0;
        break;
    case L7_INT_EN_SET:
    case L7_INT_EN_CLR:
        val = s->int_en;
        break;
    case L7_INT_VEC_EN_SET:
    case L7_INT_VEC_EN_CLR:
        val = s->vec_en;
        break;
    case L7_INT_VEC_EN_AUTO_CLR:
        val = s->vec_auto_clr;
        break;
    case L7_INT_VEC_MAP0:
    case L7_INT_VEC_MAP1:
    case L7_INT_VEC_MAP2:
        val = s->vec_map[(addr - L7_INT_VEC_MAP0) >> 2];
        break;
    case L7_INT_MOD_MAP0:
    case L7_INT_MOD_MAP1:
    case L7_INT_MOD_MAP2:
        val = s->mod_map[(addr - L7_INT_MOD_MAP0) >> 2];
        break;
    case L7_INT_MOD_CFG0 ... L7_INT_MOD_CFG0 + 4 * (L7_INT_MOD_NUM - 1):
        val = s->mod_cfg[(addr - L7_INT_MOD_CFG0) >> 2];
        break;
    case L7_DP_SEL:
        val = l7_reg(s, addr) | L7_DP_SEL_DPRDY;
        break;
    case L7_MAC_RX:
        val = s->mac_rx;
        l7_op_busy_read(s, L7O_MAC_RXD, 1);
        break;
    case L7_MAC_TX:
        val = s->mac_tx;
        l7_op_busy_read(s, L7O_MAC_TXD, 1);
        break;
    case L7_FCT_RX_CTL:
        val = s->fct_rx_en | l7_fct_rx_busy(s);
        l7_op_busy_read(s, L7O_FCT_RX_RST, L7_NUM_RX_CH);
        break;
    case L7_FCT_TX_CTL:
        val = s->fct_tx_en |
              (s->op_due[L7O_FCT_TX_RST] ? L7_FCT_TX_CTL_RESET(0) : 0);
        l7_op_busy_read(s, L7O_FCT_TX_RST, L7_NUM_TX_CH);
        break;
    case L7_FCT_INT_STS:
        val = s->fct_int_sts;
        break;
    case L7_FCT_RX_USED(0) ... L7_FCT_RX_USED(L7_NUM_RX_CH - 1):
        /* fill level (H1: a 16-bit field; unit unknown, bytes here) */
        val = s->rxf[(addr - L7_FCT_RX_USED(0)) >> 2].used & 0xFFFF;
        break;
    case L7_DMAC_CMD:
        val = s->dmac_run | s->dmac_stop | l7_dmac_cmd_busy(s);
        l7_op_busy_read(s, L7O_RX_STOP, L7O_DMAC_SWR + 1);
        break;
    case L7_DMAC_INT_STS:
        val = s->dmac_int_sts;
        break;
    case L7_DMAC_INT_EN_SET:
    case L7_DMAC_INT_EN_CLR:
        val = s->dmac_int_en;
        break;
    case L7_PTP_CMD_CTL:
        val = s->ptp_enabled ? L7_PTP_CMD_ENABLE : 0;
        break;
    case L7_OTP_STATUS:
        val = 0;
        break;
    case L7_OTP_READ_DATA:
        val = 0;                /* blank OTP */
        break;
    default:
        for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
            if (addr == L7_RX_HEAD(ch)) {
                val = s->rx_head[ch];
                goto done;
            }
            if (addr == L7_RX_TAIL(ch)) {
                val = s->rx_tail[ch];
                goto done;
            }
        }
        for (ch = 0; ch < L7_NUM_TX_CH; ch++) {
            if (addr == L7_TX_HEAD(ch)) {
                val = s->tx_head[ch];
                goto done;
            }
            if (addr == L7_TX_TAIL(ch)) {
                val = s->tx_tail[ch];
                goto done;
            }
        }
        val = l7_reg(s, addr);
        break;
    }
done:
    trace_lan743x_mmio_read(addr, val);
    return val;
}

static void l7_ptp_cmd(Lan7430State *s, uint32_t val)
{
    int64_t now = l7_ptp_now(s);

    if (val & L7_PTP_CMD_RESET) {
        s->ptp_enabled = false;
        s->ptp_offset_ns = 0;
    }
    if (val & L7_PTP_CMD_ENABLE) {
        s->ptp_enabled = true;
    }
    if (val & L7_PTP_CMD_DISABLE) {
        s->ptp_enabled = false;
    }
    if (val & L7_PTP_CMD_READ) {
        s->regs[L7_PTP_CLOCK_SEC >> 2] = now / NANOSECONDS_PER_SECOND;
        s->regs[L7_PTP_CLOCK_NS >> 2] = now % NANOSECONDS_PER_SECOND;
        s->regs[L7_PTP_CLOCK_SUBNS >> 2] = 0;
    }
    if (val & L7_PTP_CMD_LOAD) {
        int64_t t = (int64_t)l7_reg(s, L7_PTP_CLOCK_SEC) *
                    NANOSECONDS_PER_SECOND + l7_reg(s, L7_PTP_CLOCK_NS);
        s->ptp_offset_ns = t - qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    }
    if (val & (L7_PTP_CMD_STEP_SEC | L7_PTP_CMD_STEP_NSEC)) {
        uint32_t adj = l7_reg(s, L7_PTP_CLOCK_STEP_ADJ);
        int64_t v = adj & L7_PTP_STEP_MASK;
        if (val & L7_PTP_CMD_STEP_SEC) {
            v *= NANOSECONDS_PER_SECOND;
        }
        s->ptp_offset_ns += (adj & L7_PTP_STEP_DIR) ? v : -v;
    }
}

static void lan7430_mmio_write(void *opaque, hwaddr addr, uint64_t val64,
                               unsigned size)
{
    Lan7430State *s = opaque;
    uint32_t val = val64;
    int ch;

    addr &= ~3;
    s->cnt.reg_writes[addr >> 2]++;
    trace_lan743x_mmio_write(addr, val);

    switch (addr) {
    case L7_ID_REV:
    case L7_FPGA_REV:
    case L7_STRAP_READ:
        return;
    case L7_HW_CFG:
        if (val & L7_HW_CFG_LRST) {
            l7_soft_reset(s);
            return;             /* LRST self clears */
        }
        s->regs[addr >> 2] = val;
        return;
    case L7_PMT_CTL:
        if (val & L7_PMT_CTL_PHY_RST) {
            l7_phy_reset(s);
        }
        s->regs[addr >> 2] = (val & ~L7_PMT_CTL_PHY_RST) | L7_PMT_CTL_READY;
        return;
    case L7_DP_CMD:
        if ((val & 1) && (l7_reg(s, L7_DP_SEL) & 0x1F) == 1) {
            s->dp_ram[l7_reg(s, L7_DP_ADDR) & 0xFF] = l7_reg(s, L7_DP_DATA_0);
        }
        return;
    case L7_E2P_CMD:
        /* No EEPROM fitted: every command times out immediately */
        s->regs[addr >> 2] = (val & ~L7_E2P_CMD_BUSY) |
                             ((val & L7_E2P_CMD_BUSY) ? L7_E2P_CMD_TIMEOUT : 0);
        return;
    case L7_OTP_CMD_GO:
        return;
    case L7_FCT_RX_CTL:
        l7_fct_rx_write(s, val);
        l7_rx_kick(s);
        return;
    case L7_FCT_INT_STS:
        s->fct_int_sts &= ~val;
        return;
    case L7_FCT_TX_CTL:
        for (ch = 0; ch < L7_NUM_TX_CH; ch++) {
            if (val & (1u << (28 + ch))) {
                s->fct_tx_en |= 1u << (28 + ch);
            }
            if (val & (1u << (24 + ch))) {
                s->fct_tx_en &= ~(1u << (28 + ch));
            }
            if (val & L7_FCT_TX_CTL_RESET(ch)) {
                l7_op_start(s, L7O_FCT_TX_RST + ch);
            }
        }
        l7_tx_process(s, 0);
        return;
    case L7_MAC_CR:
        if (val & L7_MAC_CR_CNTR_RST) {
            l7_stats_reset(s);
        }
        if (val & L7_MAC_CR_RST) {
            s->mac_rx = (1518u << L7_MAC_RX_MAX_SHIFT) | L7_MAC_RX_RXD;
            s->mac_tx = L7_MAC_TX_TXD;
        }
        s->regs[addr >> 2] = val & ~(L7_MAC_CR_CNTR_RST | L7_MAC_CR_RST);
        return;
    case L7_MAC_RX:
        l7_mac_en_write(s, &s->mac_rx, val, L7_MAC_RX_RXD, L7O_MAC_RXD);
        l7_rx_kick(s);
        return;
    case L7_MAC_TX:
        l7_mac_en_write(s, &s->mac_tx, val, L7_MAC_TX_TXD, L7O_MAC_TXD);
        l7_tx_process(s, 0);
        return;
    case L7_MAC_MII_ACC:
        if (val & L7_MII_ACC_BUSY) {
            l7_mii_access(s, val);
        }
        s->regs[addr >> 2] = val & ~L7_MII_ACC_BUSY;
        return;
    case L7_INT_STS:
        s->int_sts &= ~val;
        for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
            if (val & L7_INT_BIT_DMA_RX(ch)) {
                s->dmac_int_sts &= ~L7_DMAC_INT_RXFRM(ch);
            }
        }
        for (ch = 0; ch < L7_NUM_TX_CH; ch++) {
            if (val & L7_INT_BIT_DMA_TX(ch)) {
                s->dmac_int_sts &= ~L7_DMAC_INT_TX_IOC(ch);
            }
        }
        l7_update_irq(s);
        return;
    case L7_INT_SET:
        s->int_sts |= val & ~(L7_INT_BIT_ALL_RX | L7_INT_BIT_ALL_TX |
                              L7_INT_BIT_MAS);
        l7_update_irq(s);
        return;
    case L7_INT_EN_SET:
        s->int_en |= val;
        l7_update_irq(s);
        return;
    case L7_INT_EN_CLR:
        s->int_en &= ~val;
        l7_update_irq(s);
        return;
    case L7_INT_STS_R2C:
        return;
    case L7_INT_VEC_EN_SET:
        s->vec_en |= val & ((1u << L7_NUM_VECTORS) - 1);
        l7_update_irq(s);
        return;
    case L7_INT_VEC_EN_CLR:
        s->vec_en &= ~val;
        l7_update_irq(s);
        return;
    case L7_INT_VEC_EN_AUTO_CLR:
        s->vec_auto_clr = val & ((1u << L7_NUM_VECTORS) - 1);
        return;
    case L7_INT_VEC_MAP0:
    case L7_INT_VEC_MAP1:
    case L7_INT_VEC_MAP2:
        s->vec_map[(addr - L7_INT_VEC_MAP0) >> 2] = val;
        l7_update_irq(s);
        return;
    case L7_INT_MOD_MAP0:
    case L7_INT_MOD_MAP1:
    case L7_INT_MOD_MAP2:
        s->mod_map[(addr - L7_INT_MOD_MAP0) >> 2] = val;
        return;
    case L7_INT_MOD_CFG0 ... L7_INT_MOD_CFG0 + 4 * (L7_INT_MOD_NUM - 1):
        s->mod_cfg[(addr - L7_INT_MOD_CFG0) >> 2] = val;
        return;
    case L7_PTP_CMD_CTL:
        l7_ptp_cmd(s, val);
        return;
    case L7_PTP_INT_STS:
        s->regs[addr >> 2] &= ~val;
        return;
    case L7_PTP_INT_EN_SET:
        s->regs[L7_PTP_INT_EN_SET >> 2] |= val;
        return;
    case L7_PTP_INT_EN_CLR:
        s->regs[L7_PTP_INT_EN_SET >> 2] &= ~val;
        return;
    case L7_DMAC_CMD:
        l7_dmac_cmd_write(s, val);
        l7_rx_kick(s);
        l7_tx_process(s, 0);
        return;
    case L7_DMAC_INT_STS:
        s->dmac_int_sts &= ~val;
        l7_update_irq(s);
        return;
    case L7_DMAC_INT_EN_SET:
        s->dmac_int_en |= val;
        l7_update_irq(s);
        return;
    case L7_DMAC_INT_EN_CLR:
        s->dmac_int_en &= ~val;
        l7_update_irq(s);
        return;
    default:
        break;
    }

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (addr == L7_RX_HEAD(ch)) {
            return;             /* read only */
        }
        if (addr == L7_RX_CFG_A(ch)) {
            s->regs[addr >> 2] = val & ~L7_RX_CFG_A_WB_SWFLUSH;
            if (val & L7_RX_CFG_A_WB_SWFLUSH) {
                l7_rx_batch_flush(s, ch, L7B_SWFLUSH);
            }
            return;
        }
        if (addr == L7_DMAC_RX_ERR_STS(ch) ||
            (ch < L7_NUM_TX_CH && addr == L7_DMAC_TX_ERR_STS(ch))) {
            /* status bits 7:0 write one to clear, enables 31:8 storage */
            s->regs[addr >> 2] = (s->regs[addr >> 2] & 0xFF & ~val) |
                                 (val & ~0xFFu);
            return;
        }
        if (addr == L7_RX_TAIL(ch)) {
            uint32_t ring = l7_reg(s, L7_RX_CFG_B(ch)) &
                            L7_RX_CFG_B_RING_LEN_MASK;
            if (!l7_tail_check(s, "rx", ch, val & 0xFFFF, ring,
                               L7_DMAC_RX_ERR_STS(ch))) {
                s->rx_tail[ch] = (val & 0xFFFF) % (ring ? ring : 0x10000);
            }
            if (val & L7_RX_TAIL_SET_TOP_INT_EN) {
                s->int_en |= L7_INT_BIT_DMA_RX(ch);
            }
            if (val & L7_RX_TAIL_SET_TOP_INT_VEC_EN) {
                s->vec_en |= 1u << (l7_src_nibble(s->vec_map, 24 + ch) &
                                    (L7_NUM_VECTORS - 1));
            }
            l7_update_irq(s);
            l7_rx_kick(s);
            return;
        }
    }
    for (ch = 0; ch < L7_NUM_TX_CH; ch++) {
        if (addr == L7_TX_HEAD(ch)) {
            return;
        }
        if (addr == L7_TX_TAIL(ch)) {
            uint32_t ring = l7_reg(s, L7_TX_CFG_B(ch)) &
                            L7_TX_CFG_B_RING_LEN_MASK;
            if (!l7_tail_check(s, "tx", ch, val & 0xFFFF, ring,
                               L7_DMAC_TX_ERR_STS(ch))) {
                s->tx_tail[ch] = (val & 0xFFFF) % (ring ? ring : 0x10000);
            }
            if (val & L7_TX_TAIL_SET_DMAC_INT_EN) {
                s->dmac_int_en |= L7_DMAC_INT_TX_IOC(ch);
            }
            if (val & L7_TX_TAIL_SET_TOP_INT_EN) {
                s->int_en |= L7_INT_BIT_DMA_TX(ch);
            }
            if (val & L7_TX_TAIL_SET_TOP_INT_VEC_EN) {
                s->vec_en |= 1u << (l7_src_nibble(s->vec_map, 16 + ch) &
                                    (L7_NUM_VECTORS - 1));
            }
            l7_tx_process(s, ch);
            l7_update_irq(s);
            return;
        }
    }
    if (addr >= L7_STAT_FIRST && addr <= L7_STAT_LAST) {
        return;                 /* statistics are read only */
    }
    s->regs[addr >> 2] = val;
}

static const MemoryRegionOps lan7430_mmio_ops = {
    .read = lan7430_mmio_read,
    .write = lan7430_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

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

static void l7_json_arr(GString *g, const char *name, const uint64_t *v, int n)
{
    int i;

    g_string_append_printf(g, "\"%s\":[", name);
    for (i = 0; i < n; i++) {
        g_string_append_printf(g, "%s%" PRIu64, i ? "," : "", v[i]);
    }
    g_string_append(g, "],");
}

static char *lan7430_get_counters(Object *obj, Error **errp)
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
    l7_json_arr(g, "irq_per_vector", c->irq_vec, L7_NUM_VECTORS);
    l7_json_arr(g, "rx_desc_consumed", c->rx_desc_consumed, L7_NUM_RX_CH);
    l7_json_arr(g, "rx_desc_written", c->rx_desc_written, L7_NUM_RX_CH);
    l7_json_arr(g, "rx_head_writebacks", c->rx_head_wb, L7_NUM_RX_CH);
    l7_json_arr(g, "rx_frames_per_channel", c->rx_frames_ch, L7_NUM_RX_CH);
    l7_json_arr(g, "irq_spurious_per_vector", c->irq_spurious, L7_NUM_VECTORS);
    l7_json_arr(g, "rx_fifo_queued", c->rx_fifo_queued, L7_NUM_RX_CH);
    l7_json_arr(g, "rx_wb_flushes", c->rx_wb_flushes, L7_NUM_RX_CH);
    l7_json_arr(g, "rx_fifo_overflow", c->rx_fifo_overflow, L7_NUM_RX_CH);
    l7_json_arr(g, "rx_fifo_peak_bytes", c->rx_fifo_peak_bytes, L7_NUM_RX_CH);
    g_string_append(g, "\"rx_fifo_bytes\":[");
    for (i = 0; i < L7_NUM_RX_CH; i++) {
        g_string_append_printf(g, "%s%u", i ? "," : "", s->rxf[i].used);
    }
    g_string_append(g, "],\"async_started\":{");
    for (i = 0; i < L7A_KINDS; i++) {
        g_string_append_printf(g, "%s\"%s\":%" PRIu64, i ? "," : "",
                               l7_async_names[i], c->async_started[i]);
    }
    g_string_append(g, "},\"rx_wb_flush_why\":{");
    for (i = 0; i < L7B_NUM; i++) {
        g_string_append_printf(g, "%s\"%s\":%" PRIu64, i ? "," : "",
                               l7_batch_why[i], c->rx_wb_flush_why[i]);
    }
    g_string_append(g, "},\"async_busy_reads\":{");
    for (i = 0; i < L7A_KINDS; i++) {
        g_string_append_printf(g, "%s\"%s\":%" PRIu64, i ? "," : "",
                               l7_async_names[i], c->async_busy_reads[i]);
    }
    g_string_append(g, "},");
    g_string_append(g, "\"fault_fired\":{");
    for (i = 0; i < L7F_NUM; i++) {
        g_string_append_printf(g, "%s\"%s\":%" PRIu64, i ? "," : "",
                               l7_fault_names[i], c->fault_fired[i]);
    }
    g_string_append(g, "},");
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
    J(rx_fault_holds);
    J(rx_fifo_flushed);
    J(rx_drop_fifo_reset);
    J(tx_pause_frames);
    J(rx_pause_holds);
    J(desc_tail_errors);
    J(rx_wb_batched_desc);
#undef J
    g_string_append_printf(g, "\"rx_fifo_kib\":%u,", s->rx_fifo_kib);
    g_string_append_printf(g, "\"rate_mbps\":%u,", s->rate_mbps);
    g_string_append_printf(g, "\"int_mod_unit_ns\":%u}", s->int_mod_unit_ns);
    return g_string_free(g, false);
}

static void lan7430_set_reset_counters(Object *obj, bool value, Error **errp)
{
    Lan7430State *s = LAN7430(obj);

    if (value) {
        memset(&s->cnt, 0, sizeof(s->cnt));
    }
}

/* ------------------------------------------------------------------------ */
/* runtime-settable properties: rate, faults                                 */

static void l7_rate_changed(Lan7430State *s)
{
    /* forget the old schedule; the new rate applies from now on */
    s->tx_wire_free = 0;
    s->rx_wire_free = 0;
    s->tx_backlog = false;
    s->rx_backlog = false;
    s->rx_reserved = false;
    s->tx_held_due = 0;
    timer_del(s->tx_pace_timer);
    timer_del(s->rx_pace_timer);
    l7_tx_process(s, 0);
    l7_update_irq(s);
    l7_rx_kick(s);
}

typedef struct L7PropU32 {
    const char *name;
    size_t off;
    uint32_t def;
    void (*changed)(Lan7430State *s);
    const char *desc;
} L7PropU32;

static const L7PropU32 l7_u32_props[] = {
    { "rate", offsetof(Lan7430State, rate_mbps), 1000, l7_rate_changed,
      "wire rate in Mbit/s (per-frame preamble, IFG and FCS included), "
      "both directions; 0 = unpaced" },
    { "rate-burst-us", offsetof(Lan7430State, rate_burst_us), 4000, NULL,
      "how far (us) frames may run ahead of the paced wire (FIFO)" },
    { "rate-catchup-us", offsetof(Lan7430State, rate_catchup_us), 10000,
      NULL, "wire time (us) lost to a late pacing timer that waiting frames "
      "may make up (absorbs timer latency under TCG)" },
    { "rx-fifo-kib", offsetof(Lan7430State, rx_fifo_kib), 32, l7_rx_kick,
      "RX FIFO per channel (KiB); estimate, plausible 12-32: see README" },
    { "peer-pause", offsetof(Lan7430State, peer_pause), 1, l7_rx_kick,
      "1 = the link partner honours our pause frames (stops sending), "
      "0 = it ignores them (the FIFO overflows)" },
    { "dma-stop-us", offsetof(Lan7430State, async_us[L7A_DMA_STOP]), 20,
      NULL, "DMAC_CMD STOP_R/STOP_T: STOP_PENDING lasts this long (us)" },
    { "dma-reset-us", offsetof(Lan7430State, async_us[L7A_DMA_RESET]), 10,
      NULL, "DMAC_CMD SWR/RX_SWR/TX_SWR read 1 this long (us)" },
    { "fifo-reset-us", offsetof(Lan7430State, async_us[L7A_FIFO_RESET]), 10,
      NULL, "FCT_RX_CTL/FCT_TX_CTL RESET reads 1 this long (us); RX frames "
      "arriving meanwhile are dropped" },
    { "mac-disable-us", offsetof(Lan7430State, async_us[L7A_MAC_DIS]), 13,
      NULL, "MAC_RX.RXD / MAC_TX.TXD set this long (us) after the enable "
      "is cleared" },
    { "desc-check", offsetof(Lan7430State, desc_check), 1, NULL,
      "1 = an RX/TX tail outside the ring sets DMAC_*_ERR_STS.DESC_TAIL_ERR "
      "and is ignored; 0 = wrapped (old model)" },
    { "rx-wb-batch", offsetof(Lan7430State, rx_wb_batch), 0, NULL,
      "1 = RX descriptor write-backs batched as RX_CFG_A says (WB_THRES, "
      "WB_ON_INT_TMR, WB_SWFLUSH); 0 = every frame at once" },
    { "fault-wb-delay-us", offsetof(Lan7430State, fault_wb_delay_us), 2000,
      NULL, "delay of the wb-delay-desc/wb-delay-head faults (us)" },
    { "fault-rx-stall-ms", offsetof(Lan7430State, fault_rx_stall_ms), 100,
      NULL, "length of an rx-stall fault (ms)" },
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

static bool l7_get_false(Object *obj, Error **errp)
{
    return false;
}

static void l7_set_fault_clear(Object *obj, bool value, Error **errp)
{
    if (value && DEVICE(obj)->realized) {
        l7_fault_clear(LAN7430(obj));
    }
}

static void lan7430_instance_init(Object *obj)
{
    Lan7430State *s = LAN7430(obj);
    int i;

    for (i = 0; i < ARRAY_SIZE(l7_u32_props); i++) {
        *(uint32_t *)((uint8_t *)s + l7_u32_props[i].off) =
            l7_u32_props[i].def;
    }
}

static void l7_class_add_runtime_props(ObjectClass *klass)
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

/* ------------------------------------------------------------------------ */
/* device                                                                    */

static void lan7430_set_link_status(NetClientState *nc)
{
    Lan7430State *s = qemu_get_nic_opaque(nc);

    trace_lan743x_link(!nc->link_down);
    if (!nc->link_down) {
        l7_rx_kick(s);
    }
}

static NetClientInfo net_lan7430_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .can_receive = lan7430_can_receive,
    .receive = lan7430_receive,
    .link_status_changed = lan7430_set_link_status,
};

static void lan7430_realize(PCIDevice *pd, Error **errp)
{
    Lan7430State *s = LAN7430(pd);
    int v;

    pd->config[PCI_INTERRUPT_PIN] = 1;
    memory_region_init_io(&s->mmio, OBJECT(s), &lan7430_mmio_ops, s,
                          "lan7430-mmio", L7_CSR_SIZE);
    pci_register_bar(pd, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->mmio);

    if (msi_init(pd, 0xD0, 1, true, false, NULL) < 0) {
        /* MSI unavailable on this machine: INTx only */
    }
    if (s->use_msix &&
        msix_init_exclusive_bar(pd, L7_NUM_VECTORS, L7_MSIX_BAR, NULL) == 0) {
        for (v = 0; v < L7_NUM_VECTORS; v++) {
            msix_vector_use(pd, v);
        }
    }

    for (v = 0; v < L7_NUM_VECTORS; v++) {
        s->mod_timer[v] = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_mod_timer_cb, s);
    }
    s->tx_pace_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_tx_pace_cb, s);
    s->rx_pace_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_rx_pace_cb, s);
    s->rx_stall_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_rx_stall_cb, s);
    s->wb_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_wb_cb, s);
    s->op_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_op_timer_cb, s);
    s->rxb_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_rx_batch_timer_cb, s);
    for (v = 0; v < L7_NUM_RX_CH; v++) {
        QSIMPLEQ_INIT(&s->rxf[v].q);
    }
    s->fault_irq_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_fault_irq_tick,
                                      s);
    s->flap_tick_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_flap_tick, s);
    s->flap_up_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_flap_up_cb, s);
    s->tx_bh = qemu_bh_new_guarded(l7_tx_bh, s,
                                   &DEVICE(pd)->mem_reentrancy_guard);
    s->txbuf = g_malloc(L7_TXBUF_MAX + 64);
    s->segbuf = g_malloc(L7_TXBUF_MAX + 64);

    qemu_macaddr_default_if_unset(&s->conf.macaddr);
    s->nic = qemu_new_nic(&net_lan7430_info, &s->conf,
                          object_get_typename(OBJECT(s)),
                          DEVICE(pd)->id,
                          &DEVICE(pd)->mem_reentrancy_guard, s);
    qemu_format_nic_info_str(qemu_get_queue(s->nic), s->conf.macaddr.a);

    l7_phy_reset(s);
    l7_soft_reset(s);
}

static void lan7430_exit(PCIDevice *pd)
{
    Lan7430State *s = LAN7430(pd);
    int v;

    for (v = 0; v < L7_NUM_VECTORS; v++) {
        timer_free(s->mod_timer[v]);
        s->mod_timer[v] = NULL;
    }
    timer_free(s->tx_pace_timer);
    timer_free(s->rx_pace_timer);
    timer_free(s->rx_stall_timer);
    timer_free(s->wb_timer);
    for (v = 0; v < L7_NUM_RX_CH; v++) {
        l7_rx_fifo_flush(s, v, false);
    }
    timer_free(s->op_timer);
    timer_free(s->rxb_timer);
    timer_free(s->fault_irq_timer);
    timer_free(s->flap_tick_timer);
    timer_free(s->flap_up_timer);
    qemu_bh_delete(s->tx_bh);
    qemu_del_nic(s->nic);
    msix_uninit_exclusive_bar(pd);
    msi_uninit(pd);
    g_free(s->txbuf);
    g_free(s->segbuf);
}

static void lan7430_reset(DeviceState *dev)
{
    Lan7430State *s = LAN7430(dev);

    l7_phy_reset(s);
    l7_soft_reset(s);
    trace_lan743x_reset("device");
}

static Property lan7430_properties[] = {
    DEFINE_NIC_PROPERTIES(Lan7430State, conf),
    DEFINE_PROP_UINT32("id-rev", Lan7430State, id_rev, 0x74300011),
    DEFINE_PROP_UINT32("int-mod-unit-ns", Lan7430State, int_mod_unit_ns, 1000),
    DEFINE_PROP_BOOL("msix", Lan7430State, use_msix, true),
    DEFINE_PROP_END_OF_LIST(),
};

static const VMStateDescription vmstate_lan7430 = {
    .name = "lan7430",
    .unmigratable = 1,
};

static void lan7430_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = lan7430_realize;
    k->exit = lan7430_exit;
    k->vendor_id = 0x1055;
    k->device_id = 0x7430;
    k->revision = 0x00;
    k->class_id = PCI_CLASS_NETWORK_ETHERNET;
    k->subsystem_vendor_id = 0x1055;
    k->subsystem_id = 0x7430;
    dc->desc = "Microchip LAN7430 Gigabit Ethernet";
    dc->reset = lan7430_reset;
    dc->vmsd = &vmstate_lan7430;
    device_class_set_props(dc, lan7430_properties);
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);

    object_class_property_add_str(klass, "counters", lan7430_get_counters,
                                  NULL);
    object_class_property_set_description(klass, "counters",
        "JSON object with model-internal counters (read only)");
    object_class_property_add_bool(klass, "reset-counters", l7_get_false,
                                   lan7430_set_reset_counters);
    object_class_property_set_description(klass, "reset-counters",
        "write true to zero all model-internal counters");
    l7_class_add_runtime_props(klass);
}

static const TypeInfo lan7430_info = {
    .name = TYPE_LAN7430,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(Lan7430State),
    .instance_init = lan7430_instance_init,
    .class_init = lan7430_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { }
    },
};

static void lan7430_register_types(void)
{
    type_register_static(&lan7430_info);
}

type_init(lan7430_register_types)
