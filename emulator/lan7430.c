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

/*
 * One abstract base type and one concrete QOM type per chip of the family
 * (as QEMU does for its own NIC families): the class carries the variant's
 * identity and its PHY arrangement, see l7_variants[] at the end.
 */
#define TYPE_LAN743X "lan743x-base"
#define TYPE_LAN7430 "lan7430"
#define TYPE_LAN7431 "lan7431"
#define TYPE_PCI11010 "pci11010"
#define TYPE_PCI11414 "pci11414"

typedef struct L7Variant {
    const char *name;
    const char *desc;
    uint16_t device_id;         /* PCI device (and subsystem) ID */
    uint8_t revision;           /* PCI revision ID */
    uint32_t id_rev;            /* ID_REV register */
    bool ext_phy;               /* external RGMII PHY instead of the internal */
    uint8_t phy_addr;           /* default MDIO address of the PHY */
    uint16_t phy_id1, phy_id2;  /* PHY identifier registers 2 and 3 */
    uint8_t num_tx;             /* TX DMA channels */
    uint8_t num_vectors;        /* MSI-X vectors */
    uint32_t bar_size;          /* BAR 0 (CSR) size */
} L7Variant;

typedef struct Lan7430Class {
    PCIDeviceClass parent_class;
    const L7Variant *var;
} Lan7430Class;

typedef struct Lan7430State Lan7430State;
DECLARE_OBJ_CHECKERS(Lan7430State, Lan7430Class, LAN7430, TYPE_LAN743X)

#define L7_MSIX_BAR         2
#define L7_RXBUF_MAX        (16 * 1024)
#define L7_TXBUF_MAX        (256 * 1024)
#define L7_NREGS            (L7_CSR_SPACE / 4)
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
    L7F_RX_SWR_HEAD,
    L7F_RX_IRQ_HOLD,
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
    [L7F_RX_SWR_HEAD] = "rx-swr-head",
    [L7F_RX_IRQ_HOLD] = "rx-irq-hold",
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
    L7O_RX_SWR = L7O_TX_STOP + L7_MAX_TX_CH,
    L7O_TX_SWR = L7O_RX_SWR + L7_NUM_RX_CH,
    L7O_DMAC_SWR = L7O_TX_SWR + L7_MAX_TX_CH,
    L7O_FCT_RX_RST,
    L7O_FCT_TX_RST = L7O_FCT_RX_RST + L7_NUM_RX_CH,
    L7O_MAC_RXD = L7O_FCT_TX_RST + L7_MAX_TX_CH,
    L7O_MAC_TXD,
    L7O_NUM
};

/* kinds of descriptor errors (desc-check), counted per kind */
enum {
    L7DE_TAIL,                  /* tail outside the ring (refused) */
    L7DE_RX_OWN,                /* RX: OWN clear below the tail */
    L7DE_TX_NOFS,               /* TX: first descriptor without FS */
    L7DE_TX_EXTRAFS,            /* TX: FS again before LS */
    L7DE_TX_EXT_MISSING,        /* TX: EXT set, next is not an extension */
    L7DE_TX_DATA_MISSING,       /* TX: extension where data was due */
    L7DE_TX_LEN,                /* TX: zero-length buffer, frame too long */
    L7DE_NUM
};

static const char *const l7_desc_err_names[L7DE_NUM] = {
    [L7DE_TAIL] = "tail",
    [L7DE_RX_OWN] = "rx-own",
    [L7DE_TX_NOFS] = "tx-nofs",
    [L7DE_TX_EXTRAFS] = "tx-extrafs",
    [L7DE_TX_EXT_MISSING] = "tx-ext-missing",
    [L7DE_TX_DATA_MISSING] = "tx-data-missing",
    [L7DE_TX_LEN] = "tx-len",
};

/*
 * RX layout quirks the driver's comments and register bits describe
 * (runtime properties quirk-*: 0 = off, N = every Nth frame)
 */
enum {
    L7Q_EXTRA_BUFFER,           /* LS one descriptor later, no data in it */
    L7Q_STATUS_EVERY,           /* status (data1) on every descriptor */
    L7Q_HASH_STORE,             /* RSS hash over data2/data3 of LS */
    L7Q_NUM
};

static const char *const l7_quirk_names[L7Q_NUM] = {
    [L7Q_EXTRA_BUFFER] = "extra-buffer",
    [L7Q_STATUS_EVERY] = "status-every-desc",
    [L7Q_HASH_STORE] = "hash-store",
};

typedef struct L7Counters {
    uint64_t reg_reads[L7_NREGS];
    uint64_t reg_writes[L7_NREGS];
    uint64_t irq_vec[L7_MAX_VECTORS];
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
    uint64_t irq_spurious[L7_MAX_VECTORS];
    uint64_t rx_pace_holds;
    uint64_t tx_pace_holds;
    uint64_t rx_wire_bytes;      /* paced frames, FCS/preamble/IFG included */
    uint64_t tx_wire_bytes;
    uint64_t rx_fault_holds;
    uint64_t fault_fired[L7F_NUM];
    uint64_t rx_fifo_queued[L7_NUM_RX_CH];
    uint64_t rx_fifo_overflow[L7_NUM_RX_CH];
    uint64_t rx_fifo_peak_bytes[L7_NUM_RX_CH];
    uint64_t rx_fifo_flushed;
    uint64_t rx_drop_fifo_reset;
    uint64_t rx_swr_fifo_enabled;
    uint64_t tx_pause_frames;
    uint64_t rx_pause_holds;
    uint64_t desc_tail_errors;
    uint64_t desc_errors;        /* all kinds, tail errors included */
    uint64_t desc_err_kind[L7DE_NUM];
    uint64_t quirk_applied[L7Q_NUM];
    uint64_t rx_wb_flushes[L7_NUM_RX_CH];
    uint64_t rx_wb_flush_why[6];
    uint64_t rx_wb_batched_desc;
    uint64_t async_started[L7A_KINDS];
    uint64_t async_busy_reads[L7A_KINDS];
} L7Counters;

/*
 * A check of the pacing from outside the schedule (l7_meter_frame): the
 * largest excess of the wire bits handed over in any window of the virtual
 * clock over what the rate carries in that window.  Units: bits x 1000,
 * which is rate (Mbit/s) x ns.
 */
typedef struct L7WireMeter {
    int64_t t;          /* the last handover instant (virtual ns) */
    int64_t base;       /* largest excess of a window ending before t (or
                         * 0), less what the rate carried since it ended */
    int64_t sum;        /* wire bits x 1000 handed over at t */
    int64_t peak;       /* largest excess since the schedule began or the
                         * counters were reset */
} L7WireMeter;

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
    uint32_t id_rev;             /* 0: the variant's */
    uint8_t phy_addr;            /* 0xFF: the variant's (external PHYs) */
    const L7Variant *var;
    int ntx;                     /* TX channels of the variant */
    int nvec;                    /* MSI-X vectors of the variant */
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
    uint32_t quirk[L7Q_NUM];     /* quirk-*: every Nth frame, 0 = off */
    uint32_t quirk_seen[L7Q_NUM];

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
    uint32_t fault_rx_irq_hold_ms;
    QEMUTimer *rx_irq_hold_timer;
    bool rx_irq_held;            /* rx-irq-hold: no RX interrupt sent */
    uint32_t rx_swr_bad;         /* rx-swr-head: channels whose last RX_SWR
                                  * left RX_HEAD reading non-zero */
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
    int tx_held_ch;              /* channel the held frame came from */
    int tx_rr;                   /* next TX channel to serve (round robin) */
    int64_t tx_held_due;
    size_t tx_held_len;
    uint32_t tx_held_d0;
    uint32_t tx_held_mss;
    bool tx_held_lso;
    QEMUTimer *tx_pace_timer;
    QEMUTimer *rx_pace_timer;
    /* the wire as handed over, checked against the rate (l7_meter_frame) */
    L7WireMeter tx_meter;
    L7WireMeter rx_meter;
    bool tx_metering;            /* frames sent now leave the paced FIFO */
    int64_t tx_meter_now;        /* ... at this instant */

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
    int64_t vec_last_fire[L7_MAX_VECTORS];
    int64_t vec_mod_due[L7_MAX_VECTORS];  /* ABS timer expiry, 0 = idle */
    QEMUTimer *mod_timer[L7_MAX_VECTORS];
    bool intx_level;

    /* DMA controller */
    uint32_t dmac_int_sts;
    uint32_t dmac_int_en;
    uint32_t dmac_run;           /* START_x bits as last commanded */
    uint32_t dmac_stop;          /* STOP_x bits */
    uint32_t rx_head[L7_NUM_RX_CH];
    uint32_t rx_tail[L7_NUM_RX_CH];
    uint32_t tx_head[L7_MAX_TX_CH];
    uint32_t tx_tail[L7_MAX_TX_CH];
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

/* bytes one frame (without FCS) occupies on the wire */
static uint64_t l7_wire_bytes(size_t len)
{
    /* preamble+SFD 8, FCS 4, IFG 12; minimum frame 64 incl. FCS */
    return MAX(len + 4, 64) + 8 + 12;
}

/*
 * time one frame (without FCS) occupies the wire at rate_mbps, rounded up:
 * the schedule never books less than the wire takes
 */
static int64_t l7_wire_ns(Lan7430State *s, size_t len)
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
static int64_t l7_wire_book(Lan7430State *s, int64_t *free, bool backlog,
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
static void l7_meter_start(L7WireMeter *m)
{
    m->t = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    m->base = 0;
    m->sum = 0;
    m->peak = 0;
}

static void l7_meter_frame(Lan7430State *s, L7WireMeter *m, int64_t now,
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

/*
 * The model is one translation unit split by concern (like e1000e/igb are
 * split into files); each part below uses the declarations above and the
 * parts before it.
 */
#include "lan7430-irq.c.inc"      /* interrupt controller */
#include "lan7430-phy.c.inc"      /* PHY and MDIO */

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
    s->rx_swr_bad &= ~(1u << ch);
    s->dmac_run &= ~L7_DMAC_CMD_START_R(ch);
    s->dmac_stop &= ~L7_DMAC_CMD_STOP_R(ch);
    s->dmac_int_sts &= ~L7_DMAC_INT_RXFRM(ch);
    s->regs[L7_RX_CFG_A(ch) >> 2] = 0;
    s->regs[L7_RX_CFG_B(ch) >> 2] = 0;
    s->regs[L7_RX_CFG_C(ch) >> 2] = 0;
}

static void l7_dma_tx_reset(Lan7430State *s, int ch)
{
    if (s->tx_held_ch == ch) {
        s->tx_held = false;
    }
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

static void l7_stats_reset(Lan7430State *s)
{
    memset(&s->regs[L7_STAT_FIRST >> 2], 0,
           (L7_STAT_LAST - L7_STAT_FIRST + 4));
}

static void l7_rx_kick(Lan7430State *s);
static void l7_rx_fifo_flush(Lan7430State *s, int ch, bool disable);
static void l7_desc_error(Lan7430State *s, bool tx, int ch, int kind,
                          uint32_t idx);

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
    for (v = 0; v < L7_MAX_VECTORS; v++) {
        s->vec_last_fire[v] = 0;
        s->vec_mod_due[v] = 0;
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

#include "lan7430-rx.c.inc"       /* MAC, filter, RSS, RX FIFO, RX DMA */
#include "lan7430-tx.c.inc"       /* TX DMA, offloads, TSO */
#include "lan7430-faults.c.inc"   /* pacing and fault timers */
#include "lan7430-async.c.inc"    /* operations that take time */
#include "lan7430-regs.c.inc"     /* register dispatch (MMIO) */
#include "lan7430-qom.c.inc"      /* counters, runtime properties */

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

/* the variant's identity, and the PHY address property checked */
static bool l7_variant_realize(Lan7430State *s, Error **errp)
{
    s->var = LAN7430_GET_CLASS(s)->var;
    s->ntx = s->var->num_tx;
    s->nvec = s->var->num_vectors;
    if (!s->id_rev) {
        s->id_rev = s->var->id_rev;
    }
    if (!s->var->ext_phy) {
        s->phy_addr = s->var->phy_addr;     /* internal PHY: fixed */
    } else if (s->phy_addr == 0xFF) {
        s->phy_addr = s->var->phy_addr;
    } else if (s->phy_addr > 31) {
        error_setg(errp, "phy-addr %u: MDIO addresses are 0..31",
                   s->phy_addr);
        return false;
    }
    return true;
}

static void lan7430_realize(PCIDevice *pd, Error **errp)
{
    Lan7430State *s = LAN7430(pd);
    int v;

    if (!l7_variant_realize(s, errp)) {
        return;
    }
    pd->config[PCI_INTERRUPT_PIN] = 1;
    memory_region_init_io(&s->mmio, OBJECT(s), &lan7430_mmio_ops, s,
                          "lan7430-mmio", s->var->bar_size);
    pci_register_bar(pd, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->mmio);

    if (msi_init(pd, 0xD0, 1, true, false, NULL) < 0) {
        /* MSI unavailable on this machine: INTx only */
    }
    if (s->use_msix &&
        msix_init_exclusive_bar(pd, s->nvec, L7_MSIX_BAR, NULL) == 0) {
        for (v = 0; v < s->nvec; v++) {
            msix_vector_use(pd, v);
        }
    }

    for (v = 0; v < L7_MAX_VECTORS; v++) {
        s->mod_timer[v] = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_mod_timer_cb, s);
    }
    s->tx_pace_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_tx_pace_cb, s);
    s->rx_pace_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_rx_pace_cb, s);
    l7_meter_start(&s->tx_meter);
    l7_meter_start(&s->rx_meter);
    s->rx_stall_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_rx_stall_cb, s);
    s->rx_irq_hold_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                        l7_rx_irq_hold_cb, s);
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

    for (v = 0; v < L7_MAX_VECTORS; v++) {
        timer_free(s->mod_timer[v]);
        s->mod_timer[v] = NULL;
    }
    timer_free(s->tx_pace_timer);
    timer_free(s->rx_pace_timer);
    timer_free(s->rx_stall_timer);
    timer_free(s->rx_irq_hold_timer);
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
    DEFINE_PROP_UINT32("id-rev", Lan7430State, id_rev, 0),
    DEFINE_PROP_UINT32("int-mod-unit-ns", Lan7430State, int_mod_unit_ns, 1000),
    DEFINE_PROP_BOOL("msix", Lan7430State, use_msix, true),
    DEFINE_PROP_END_OF_LIST(),
};

/* variants with an external PHY: its MDIO address (PHYAD straps) */
static Property l7_ext_phy_properties[] = {
    DEFINE_PROP_UINT8("phy-addr", Lan7430State, phy_addr, 0xFF),
    DEFINE_PROP_END_OF_LIST(),
};

static const VMStateDescription vmstate_lan7430 = {
    .name = "lan7430",
    .unmigratable = 1,
};

/* the abstract base: everything the variants share */
static void lan743x_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = lan7430_realize;
    k->exit = lan7430_exit;
    k->vendor_id = 0x1055;
    k->class_id = PCI_CLASS_NETWORK_ETHERNET;
    k->subsystem_vendor_id = 0x1055;
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

/* one concrete type per chip, data = its L7Variant */
static void l7_variant_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    Lan7430Class *lc = LAN7430_CLASS(klass);
    const L7Variant *v = data;

    lc->var = v;
    k->device_id = v->device_id;
    k->subsystem_id = v->device_id;
    k->revision = v->revision;
    dc->desc = v->desc;
    if (v->ext_phy) {
        device_class_set_props(dc, l7_ext_phy_properties);
    }
}

/*
 * Sources (docs/emulator.md): PCI IDs from the driver's
 * lan743x_pci_tbl / PCI_DEVICE_ID_SMSC_*, ID_REV IDs from lan743x_main.h
 * ID_REV_ID_*; the chip revisions and the LAN7431's PHY are estimates.
 */
static const L7Variant l7_variants[] = {
    {
        .name = TYPE_LAN7430,
        .desc = "Microchip LAN7430 Gigabit Ethernet",
        .device_id = 0x7430, .revision = 0x00, .id_rev = 0x74300011,
        .ext_phy = false, .phy_addr = L7_PHY_ADDR,
        .phy_id1 = L7_PHY_ID1, .phy_id2 = L7_PHY_ID2,
        .num_tx = 1, .num_vectors = 8, .bar_size = L7_CSR_SIZE,
    },
    {
        .name = TYPE_LAN7431,
        .desc = "Microchip LAN7431 Gigabit Ethernet (RGMII, external PHY)",
        .device_id = 0x7431, .revision = 0x00, .id_rev = 0x74310011,
        .ext_phy = true, .phy_addr = L7_EXT_PHY_ADDR,
        .phy_id1 = L7_EXT_PHY_ID1, .phy_id2 = L7_EXT_PHY_ID2,
        .num_tx = 1, .num_vectors = 8, .bar_size = L7_CSR_SIZE,
    },
    /*
     * PCI11x1x (B0), strapped for RGMII with an external PHY (STRAP_READ
     * and FPGA_REV read 0: neither SGMII nor RMII): 4 TX channels, 16
     * vectors, the ETH_SYS block at 0x4000 (storage; the hardware
     * semaphore ETH_SYSTEM_SYS_LOCK_REG reads back what was written).
     */
    {
        .name = TYPE_PCI11010,
        .desc = "Microchip PCI11010 Gigabit Ethernet (RGMII, external PHY)",
        .device_id = 0xA011, .revision = 0x00, .id_rev = 0xA01100B0,
        .ext_phy = true, .phy_addr = L7_EXT_PHY_ADDR,
        .phy_id1 = L7_HS_PHY_ID1, .phy_id2 = L7_HS_PHY_ID2,
        .num_tx = 4, .num_vectors = 16, .bar_size = L7_CSR_SPACE,
    },
    {
        .name = TYPE_PCI11414,
        .desc = "Microchip PCI11414 Gigabit Ethernet (RGMII, external PHY)",
        .device_id = 0xA041, .revision = 0x00, .id_rev = 0xA04100B0,
        .ext_phy = true, .phy_addr = L7_EXT_PHY_ADDR,
        .phy_id1 = L7_HS_PHY_ID1, .phy_id2 = L7_HS_PHY_ID2,
        .num_tx = 4, .num_vectors = 16, .bar_size = L7_CSR_SPACE,
    },
};

static const TypeInfo lan743x_base_info = {
    .name = TYPE_LAN743X,
    .parent = TYPE_PCI_DEVICE,
    .abstract = true,
    .instance_size = sizeof(Lan7430State),
    .instance_init = lan7430_instance_init,
    .class_size = sizeof(Lan7430Class),
    .class_init = lan743x_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { }
    },
};

static void lan7430_register_types(void)
{
    int i;

    type_register_static(&lan743x_base_info);
    for (i = 0; i < ARRAY_SIZE(l7_variants); i++) {
        TypeInfo ti = {
            .name = l7_variants[i].name,
            .parent = TYPE_LAN743X,
            .class_init = l7_variant_class_init,
            .class_data = (void *)&l7_variants[i],
        };

        type_register(&ti);
    }
}

type_init(lan7430_register_types)
