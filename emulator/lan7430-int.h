/*
 * QEMU model of the Microchip LAN7430: the state the compilation units of
 * the model share (lan7430.c, lan7430-*.c), tiny inline helpers and the
 * functions one unit calls in another.  Internal to the model; the
 * register map is lan7430.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_NET_LAN7430_INT_H
#define HW_NET_LAN7430_INT_H

#include "hw/pci/pci.h"
#include "net/net.h"
#include "qemu/notify.h"
#include "qemu/queue.h"
#include "qemu/timer.h"
#include "qom/object.h"
#include "sysemu/dma.h"
#include "lan7430.h"

/*
 * One abstract base type and one concrete QOM type per chip of the family
 * (as QEMU does for its own NIC families): the class carries the variant's
 * identity and its PHY arrangement, see l7_variants[] in lan7430-pci.c.
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

extern const char *const l7_fault_names[L7F_NUM];

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
    uint64_t head_addr;         /* batches: head write-back address and */
    bool head_en;               /* HP_WB_EN when the batch was started */
    uint32_t gen;               /* batches: ring generation (freed ring) */
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

extern const char *const l7_async_names[L7A_KINDS];

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

/* a tail write waiting for its descriptor fetch (desc-fetch-ns) */
#define L7_FETCH_MAX        8
typedef struct L7Fetch {
    int64_t due;
    uint32_t val;
} L7Fetch;

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

extern const char *const l7_desc_err_names[L7DE_NUM];

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

extern const char *const l7_quirk_names[L7Q_NUM];

/*
 * Histogram of the delay from an RX frame's write-back to the message of
 * its vector, in microseconds of virtual time: bins 0-3 are 0, 1, 2 and 3
 * us, then four bins per power of two (4, 5, 6, 7, 8, 10, 12, 14, 16, ...);
 * the last bin holds everything from its lower bound on.
 */
#define L7_WB_DELAY_BINS        76
/* write-back events (a frame or a batch) waiting for their vector's message */
#define L7_WB_DELAY_PENDING     256
/* frames of a write-back batch whose own time is kept (WB_THRES < 32) */
#define L7_WB_DELAY_BATCH       32
/* changes of each INT_MOD_CFG slot kept with their virtual time */
#define L7_INT_MOD_LOG          8

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
    /* virtual time each channel's FIFO was off: from an FCT_RX_CTL disable
     * of an enabled FIFO to its next enable (the current period included
     * when read) */
    uint64_t rx_fifo_off_ns[L7_NUM_RX_CH];
    uint64_t tx_pause_frames;
    uint64_t tx_xon_frames;
    uint64_t rx_pause_holds;
    uint64_t rx_pause_frames;    /* PAUSE frames from the partner */
    uint64_t tx_pause_delayed;   /* TX frames held back by one */
    uint64_t rx_frames_after_xoff;
    uint64_t peer_paused_ns;     /* holds that ended; + the current one */
    uint64_t desc_tail_errors;
    uint64_t desc_errors;        /* all kinds, tail errors included */
    uint64_t desc_err_kind[L7DE_NUM];
    uint64_t quirk_applied[L7Q_NUM];
    uint64_t rx_wb_flushes[L7_NUM_RX_CH];
    uint64_t rx_wb_flush_why[6];
    uint64_t rx_wb_batched_desc;
    uint64_t tx_wb_flushes;
    uint64_t tx_wb_flush_why[6];
    uint64_t tx_wb_batched_desc;
    uint64_t wb_late_writes;     /* batches written after their stop */
    uint64_t wb_discarded;       /* pending batches dropped by a reset */
    uint64_t wb_freed_ring_writes; /* written into a reprogrammed ring */
    uint64_t dma_errors;         /* pci_dma_* not MEMTX_OK (vIOMMU fault) */
    uint64_t strict_dma_errors;  /* strict-dma: writes the run fails on */
    uint64_t desc_fetch_delayed; /* tail writes acted on after a delay */
    uint64_t rx_dma_timed_frames; /* frames moved by the timed RX DMA */
    uint64_t rx_dma_wait_ns;     /* DMA start to in the ring, summed */
    uint64_t rx_dma_wait_max_ns;
    uint64_t dma_coal_holds;     /* frames held by DMA coalescing */
    uint64_t dma_coal_exit_why[4];  /* threshold, timer, csr, interrupt */
    uint64_t mac_fse_refused;    /* MAC_RX FSE changes ignored (RXEN) */
    uint64_t async_started[L7A_KINDS];
    uint64_t async_busy_reads[L7A_KINDS];
    uint64_t async_wait_ns[L7A_KINDS];      /* virtual time, start to end */
    uint64_t async_wait_max_ns[L7A_KINDS];
    /* RX frames: delay from write-back to the message that reports them */
    uint64_t wb_delay_hist[L7_MAX_VECTORS][L7_WB_DELAY_BINS];
    uint64_t wb_delay_frames[L7_MAX_VECTORS];
    uint64_t wb_delay_sum_ns[L7_MAX_VECTORS];
    uint64_t wb_delay_max_ns[L7_MAX_VECTORS];
    uint64_t wb_masked_frames[L7_MAX_VECTORS];
    uint64_t wb_unreported_frames[L7_MAX_VECTORS];
    uint64_t wb_delay_overflow[L7_MAX_VECTORS];
    /* virtual time of each RX channel's last frame write-back */
    uint64_t rx_last_wb_ns[L7_NUM_RX_CH];
    /* INT_MOD_CFG: writes per slot, and its last L7_INT_MOD_LOG changes of
     * value (virtual time, new value), the latest at (changes - 1) % LOG */
    uint64_t int_mod_writes[L7_INT_MOD_NUM];
    uint64_t int_mod_changes[L7_INT_MOD_NUM];
    uint64_t int_mod_log_ns[L7_INT_MOD_NUM][L7_INT_MOD_LOG];
    uint64_t int_mod_log_val[L7_INT_MOD_NUM][L7_INT_MOD_LOG];
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
    char *exit_report;           /* counters JSON written here at exit */
    Notifier exit_notifier;
    uint32_t rate_mbps;          /* wire pacing, 0 = unpaced */
    uint32_t rate_burst_us;      /* how far frames may run ahead of the wire */
    uint32_t rate_catchup_us;    /* wire time lost to late timers made up */
    uint32_t rx_fifo_kib;        /* per-channel RX FIFO size */
    uint32_t peer_pause;         /* link partner honours pause frames */
    uint32_t peer_pause_lag;     /* frames it still sends after an XOFF */
    uint32_t phy_lp_pause;       /* partner advertises pause (MII reg 5) */
    uint32_t async_us[L7A_KINDS]; /* duration of each kind of operation */
    uint32_t desc_check;         /* out-of-range tails raise DMAC errors */
    uint32_t rx_wb_batch;        /* honour RX_CFG_A write-back batching */
    uint32_t stat_preset;        /* stat-preset: last value written */
    uint32_t quirk[L7Q_NUM];     /* quirk-*: every Nth frame, 0 = off */
    uint32_t quirk_seen[L7Q_NUM];
    uint32_t tx_wb_batch;        /* honour TX_CFG_A head write-back batching */
    uint32_t wb_at_stop;         /* 0: a stop flushes pending write-backs,
                                  * 1: they are written after it (late) */
    uint32_t desc_fetch_ns;      /* tail write to descriptor fetch */
    uint32_t dma_rate;           /* RX DMA bytes per us, 0 = infinite */
    uint32_t wb_latency_ns;      /* data written to descriptor written */
    uint32_t dma_coal;           /* honour DMAC_CFG.COAL_EN */
    uint32_t dma_coal_timer_unit_us; /* DMAC_COAL_CFG TIMER_LIMIT unit */
    uint32_t dma_coal_thres_unit;    /* DMAC_COAL_CFG RX_THRES unit, bytes */
    uint32_t stats_bits;         /* statistics counter width: 20 or 32 */
    uint32_t fse_lock;           /* MAC_RX FSE unchangeable while RXEN */
    bool strict_dma;             /* bad DMA writes stop the run */
    uint16_t pci_rev;            /* PCI revision ID, 0xFFFF: the variant's */

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
    int64_t rx_held_ns;          /* its wire time */
    int rx_held_ch;              /* the RX channel RSS sends it to */
    /* TX FIFO: one fetched frame (or TSO chain) waiting for the wire */
    bool tx_held;
    int tx_held_ch;              /* channel the held frame came from */
    int tx_rr;                   /* next TX channel to serve (round robin) */
    int64_t tx_held_due;
    int64_t tx_held_ns;          /* its wire time (TSO chain) */
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
    bool vec_mod_expired[L7_MAX_VECTORS]; /* write-back on the ABS timer */
    QEMUTimer *mod_timer[L7_MAX_VECTORS];
    /* RX write-backs since the vector's last message (wb delay histogram) */
    int64_t wb_pend_t[L7_MAX_VECTORS][L7_WB_DELAY_PENDING];
    int wb_pend_cnt[L7_MAX_VECTORS];
    bool intx_level;

    /* DMA controller */
    uint32_t dmac_int_sts;
    uint32_t dmac_int_en;
    uint32_t dmac_run;           /* START_x bits as last commanded */
    uint32_t dmac_stop;          /* STOP_x bits */
    uint32_t rx_head[L7_NUM_RX_CH];
    uint32_t rx_tail[L7_NUM_RX_CH];     /* the DMA's (fetched) tail */
    uint32_t tx_head[L7_MAX_TX_CH];
    uint32_t tx_tail[L7_MAX_TX_CH];
    uint32_t rx_tail_reg[L7_NUM_RX_CH]; /* the register as written */
    uint32_t tx_tail_reg[L7_MAX_TX_CH];
    /* tail writes not yet acted on (desc-fetch-ns): RX 0-3, TX 4-7 */
    L7Fetch fetch[L7_NUM_RX_CH + L7_MAX_TX_CH][L7_FETCH_MAX];
    int fetch_n[L7_NUM_RX_CH + L7_MAX_TX_CH];
    QEMUTimer *fetch_timer;
    /* timed RX DMA (dma-rate, wb-latency-ns): the frame at the head of a
     * channel's FIFO is in the ring at rx_dma_due (0 = none moving) */
    int64_t rx_dma_due[L7_NUM_RX_CH];
    int64_t rx_dma_t0[L7_NUM_RX_CH];
    int64_t dma_link_free;       /* the PCIe link is free from then on */
    QEMUTimer *rx_dma_timer;
    /* DMA coalescing (dma-coal): RX frames held in the FIFOs */
    bool coal_idle;              /* coalescing: frames are held */
    int64_t coal_due;            /* its timer, 0 = not started */
    bool coal_int;               /* an interrupt was sent: exit (timer) */
    QEMUTimer *coal_timer;
    bool strict_failed;          /* strict-dma: the run failed */
    QEMUBH *strict_bh;
    uint32_t fct_rx_en;
    uint32_t fct_tx_en;
    uint32_t fct_int_sts;
    L7RxFifo rxf[L7_NUM_RX_CH];
    uint32_t pause_ch;           /* channels whose FIFO level sent XOFF */
    QEMUTimer *pause_refresh_timer; /* XOFF re-sent while still paused */
    /* the link partner paused by our XOFF (peer-pause=1) */
    int64_t peer_hold_until;     /* virtual ns its pause ends, 0 = sending */
    int64_t peer_hold_start;     /* since when (peer_paused_ns) */
    int64_t fifo_off_since[L7_NUM_RX_CH];   /* rx_fifo_off_ns; 0: on */
    uint32_t peer_lag_left;      /* frames still in flight after the XOFF */
    QEMUTimer *peer_pause_timer;
    /* the partner's PAUSE frame holds our transmitter (MAC_FLOW.RX_FCEN) */
    int64_t tx_pause_until;      /* virtual ns no frame starts before */
    int64_t op_due[L7O_NUM];     /* operation in progress until, 0 = idle */
    int64_t op_t0[L7O_NUM];      /* ... started at */
    QEMUTimer *op_timer;
    /* a stop/disable waits for the frame on the wire (see async) */
    bool rx_mac_finishing;       /* MAC RX disabled: the frame in flight
                                  * is still received */
    bool tx_mac_finishing;       /* MAC TX disabled: the held frame on the
                                  * wire is still sent */
    uint32_t rx_dma_finishing;   /* RX channels stopping: the frame in
                                  * flight still goes to the ring */
    uint32_t rx_ring_gen[L7_NUM_RX_CH]; /* ring/head-WB address writes */
    uint32_t tx_ring_gen[L7_MAX_TX_CH];
    uint32_t wb_late;            /* RX (bits 0-3) / TX (8-11) batches left
                                  * pending by a completed stop */
    /* RX descriptor write-backs batched per RX_CFG_A (rx-wb-batch) */
    L7WbPending rxb[L7_NUM_RX_CH];
    int rxb_descs[L7_NUM_RX_CH];
    int rxb_frames[L7_NUM_RX_CH];
    /* when each frame of the batch was in the ring (wb delay histogram) */
    int64_t rxb_t[L7_NUM_RX_CH][L7_WB_DELAY_BATCH];
    int64_t rxb_due[L7_NUM_RX_CH];
    QEMUTimer *rxb_timer;
    /* TX head write-backs batched per TX_CFG_A (tx-wb-batch) */
    L7WbPending txb[L7_MAX_TX_CH];
    int txb_descs[L7_MAX_TX_CH];
    bool txb_ioc[L7_MAX_TX_CH];
    int64_t txb_due[L7_MAX_TX_CH];
    QEMUTimer *txb_timer;

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

/* frame parsing (lan7430-rx.c, used by TX offloads too) */
typedef struct L7Parse {
    int l3off;
    int l4off;
    int l4proto;        /* -1 when unknown */
    bool v4;
    bool v6;
    bool frag;
} L7Parse;

/* why an RX write-back batch was written (counters rx_wb_flush_why[]) */
enum { L7B_THRES, L7B_TIMER, L7B_SWFLUSH, L7B_STOP, L7B_FULL, L7B_ORDER,
       L7B_NUM };
extern const char *const l7_batch_why[L7B_NUM];

extern const MemoryRegionOps lan7430_mmio_ops;

/* ------------------------------------------------------------------------ */
/* helpers (tiny; the others are in lan7430.c)                              */

static inline uint32_t l7_reg(Lan7430State *s, hwaddr off)
{
    return s->regs[off >> 2];
}

uint32_t l7_stat_mask(Lan7430State *s, hwaddr off);

/* statistics counters wrap at their width (stats-counter-bits) */
static inline void l7_stat_add(Lan7430State *s, hwaddr off, uint32_t v)
{
    s->regs[off >> 2] = (s->regs[off >> 2] + v) & l7_stat_mask(s, off);
}

static inline uint64_t l7_addr64(Lan7430State *s, hwaddr hi, hwaddr lo)
{
    return ((uint64_t)l7_reg(s, hi) << 32) | l7_reg(s, lo);
}

static inline unsigned l7_desc_space(Lan7430State *s)
{
    return 16u << (l7_reg(s, L7_DMAC_CFG) & 3);
}

static inline bool l7_link_up(Lan7430State *s)
{
    NetClientState *nc = qemu_get_queue(s->nic);
    return !nc->link_down && !(s->phy.bmcr & 0x0800) && !s->flap_down;
}

static inline bool l7_fault_armed(Lan7430State *s, int f)
{
    return s->fault[f].count || s->fault[f].every;
}

/* bytes one frame (without FCS) occupies on the wire */
static inline uint64_t l7_wire_bytes(size_t len)
{
    /* preamble+SFD 8, FCS 4, IFG 12; minimum frame 64 incl. FCS */
    return MAX(len + 4, 64) + 8 + 12;
}

/* ------------------------------------------------------------------------ */
/* functions called from another unit, by the unit that defines them        */

/* lan7430.c */
void l7_dma_read(Lan7430State *s, dma_addr_t a, void *buf, dma_addr_t len,
                 bool desc);
void l7_dma_write(Lan7430State *s, dma_addr_t a, const void *buf,
                  dma_addr_t len, bool desc);
bool l7_fault_hit(Lan7430State *s, int f);
int64_t l7_wire_ns(Lan7430State *s, size_t len);
int64_t l7_wire_book(Lan7430State *s, int64_t *free, bool backlog,
                     int64_t ns);
void l7_meter_start(L7WireMeter *m);
void l7_meter_frame(Lan7430State *s, L7WireMeter *m, int64_t now,
                    size_t len, uint64_t *bytes);
void l7_dma_rx_reset(Lan7430State *s, int ch);
void l7_dma_tx_reset(Lan7430State *s, int ch);
void l7_dmac_reset(Lan7430State *s);
void l7_stats_reset(Lan7430State *s);
void l7_strict_dma_fail(Lan7430State *s, const char *what, int ch);
void l7_strict_bh(void *opaque);
void l7_fetch_timer_cb(void *opaque);
bool l7_tail_write(Lan7430State *s, bool tx, int ch, uint32_t val);
void l7_fetch_cancel(Lan7430State *s, bool tx, int ch);
void l7_soft_reset(Lan7430State *s);

/* lan7430-irq.c */
uint32_t l7_int_sts(Lan7430State *s);
unsigned l7_src_nibble(const uint32_t map[3], int bit);

/* the MSI-X vector interrupt source BIT (INT_STS numbering) is mapped to */
static inline int l7_src_vector(Lan7430State *s, int bit)
{
    return l7_src_nibble(s->vec_map, bit) % s->nvec;
}

int64_t l7_mod_interval_ns(Lan7430State *s, uint32_t srcs);
void l7_mod_expired(Lan7430State *s, uint32_t srcs);
void l7_update_irq(Lan7430State *s);
void l7_wb_delay_start(Lan7430State *s, int ch, uint32_t frames,
                       const int64_t *t);
void l7_wb_delay_clear(Lan7430State *s);
uint64_t l7_wb_delay_bin_lower_us(int bin);
void l7_mod_timer_cb(void *opaque);

/* lan7430-phy.c */
void l7_phy_reset(Lan7430State *s);
void l7_mii_access(Lan7430State *s, uint32_t acc);

/* lan7430-rx.c */
bool l7_rx_enabled(Lan7430State *s);
void l7_wb_written(Lan7430State *s, L7WbPending *b, uint32_t gen,
                   uint32_t late_bit, const char *dir, int ch);
void l7_rx_batch_stop(Lan7430State *s, int ch);
void l7_parse(const uint8_t *p, size_t len, L7Parse *r);
void l7_ipv4_csum(uint8_t *p, const L7Parse *r);
void l7_l4_csum(uint8_t *p, size_t len, const L7Parse *r);
void l7_stat_frame(Lan7430State *s, bool rx, const uint8_t *p,
                   uint32_t flen);
int64_t l7_ptp_now(Lan7430State *s);
bool lan7430_can_receive(NetClientState *nc);
void l7_rx_head_wb(Lan7430State *s, int ch, uint32_t idx);
void l7_rx_signal(Lan7430State *s, int ch, uint32_t frames, const int64_t *t);
void l7_rx_batch_flush(Lan7430State *s, int ch, int why);
void l7_rx_batch_discard(Lan7430State *s, int ch);
void l7_rx_batch_timer_cb(void *opaque);
void l7_rx_fifo_flush(Lan7430State *s, int ch, bool disable);
ssize_t lan7430_receive(NetClientState *nc, const uint8_t *buf,
                        size_t size);
void l7_rx_kick(Lan7430State *s);
void l7_pause_refresh_cb(void *opaque);
void l7_peer_pause_cb(void *opaque);
void l7_peer_pause_changed(Lan7430State *s);
void l7_rx_dma_timer_cb(void *opaque);
void l7_coal_timer_cb(void *opaque);
void l7_coal_exit(Lan7430State *s, int why);
bool l7_coal_on(Lan7430State *s);

/* lan7430-tx.c */
void l7_tx_batch_discard(Lan7430State *s, int ch);
void l7_tx_batch_timer_cb(void *opaque);
void l7_tx_batch_stop(Lan7430State *s, int ch);
void l7_tx_kick(Lan7430State *s);
void l7_tx_bh(void *opaque);
int64_t l7_tx_chain_ns(Lan7430State *s, const uint8_t *p, size_t len,
                       bool lso, uint32_t mss);
void l7_tx_process(Lan7430State *s, int ch);

/* lan7430-faults.c */
void l7_tx_pace_cb(void *opaque);
void l7_rx_pace_cb(void *opaque);
void l7_rx_stall_cb(void *opaque);
void l7_rx_irq_hold_cb(void *opaque);
void l7_wb_cb(void *opaque);
void l7_wb_cancel(Lan7430State *s, int ch);
void l7_fault_irq_tick(void *opaque);
void l7_flap_up_cb(void *opaque);
void l7_flap_tick(void *opaque);
void l7_fault_clear(Lan7430State *s);

/* lan7430-async.c */
void l7_desc_error(Lan7430State *s, bool tx, int ch, int kind,
                   uint32_t idx);
void l7_ring_regs_written(Lan7430State *s, hwaddr addr);
void l7_op_start(Lan7430State *s, int op);
void l7_op_timer_cb(void *opaque);
void l7_op_busy_read(Lan7430State *s, int first, int n);
uint32_t l7_dmac_cmd_busy(Lan7430State *s);
uint32_t l7_fct_rx_busy(Lan7430State *s);
void l7_dmac_cmd_write(Lan7430State *s, uint32_t val);
void l7_fct_rx_write(Lan7430State *s, uint32_t val);
void l7_mac_en_write(Lan7430State *s, uint32_t *reg, uint32_t val,
                     uint32_t dis, int op);
bool l7_tail_check(Lan7430State *s, const char *dir, int ch,
                   uint32_t idx, uint32_t ring, hwaddr err_reg);

/* lan7430-qom.c */
char *lan7430_get_counters(Object *obj, Error **errp);
void lan7430_set_reset_counters(Object *obj, bool value, Error **errp);
bool l7_get_false(Object *obj, Error **errp);
void lan7430_instance_init(Object *obj);
void l7_class_add_runtime_props(ObjectClass *klass);

#endif
