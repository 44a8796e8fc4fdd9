/*
 * QEMU model of the Microchip LAN7430: operations that take time (stops, resets, MAC disable) and descriptor validation.
 *
 * A compilation unit of the model: the shared state and the functions other
 * units call are declared in lan7430-int.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "lan7430-int.h"
#include "trace.h"

const char *const l7_desc_err_names[L7DE_NUM] = {
    [L7DE_TAIL] = "tail",
    [L7DE_RX_OWN] = "rx-own",
    [L7DE_TX_NOFS] = "tx-nofs",
    [L7DE_TX_EXTRAFS] = "tx-extrafs",
    [L7DE_TX_EXT_MISSING] = "tx-ext-missing",
    [L7DE_TX_DATA_MISSING] = "tx-data-missing",
    [L7DE_TX_LEN] = "tx-len",
};

/* ------------------------------------------------------------------------ */
/* operations that take time (QEMU timer), properties *-us                   */

const char *const l7_async_names[L7A_KINDS] = {
    [L7A_DMA_STOP] = "dma-stop",
    [L7A_DMA_RESET] = "dma-reset",
    [L7A_FIFO_RESET] = "fifo-reset",
    [L7A_MAC_DIS] = "mac-disable",
};

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
    int kind = l7_op_kind(op);
    /* within the write: 0 (the clock runs on under TCG meanwhile) */
    uint64_t waited = s->op_due[op] ?
                      qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - s->op_t0[op] : 0;

    s->op_due[op] = 0;
    s->cnt.async_wait_ns[kind] += waited;
    s->cnt.async_wait_max_ns[kind] = MAX(s->cnt.async_wait_max_ns[kind],
                                         waited);
    trace_lan743x_async_done(l7_async_names[kind], op);
    if (op >= L7O_RX_STOP && op < L7O_TX_STOP) {
        int ch = op - L7O_RX_STOP;

        if (s->rx_dma_finishing & (1u << ch)) {
            l7_rx_kick(s);      /* the frame waited for goes in first */
            s->rx_dma_finishing &= ~(1u << ch);
        }
        s->dmac_run &= ~L7_DMAC_CMD_START_R(ch);
        l7_rx_batch_stop(s, ch);                /* wb-at-stop */
        s->dmac_int_sts |= L7_DMAC_INT_RX_STOP(ch);
    } else if (op >= L7O_TX_STOP && op < L7O_RX_SWR) {
        int ch = op - L7O_TX_STOP;

        s->dmac_run &= ~L7_DMAC_CMD_START_T(ch);
        l7_tx_batch_stop(s, ch);
        s->dmac_int_sts |= L7_DMAC_INT_TX_STOP(ch);
    } else if (op == L7O_MAC_RXD) {
        if (s->rx_mac_finishing) {
            l7_rx_kick(s);      /* the frame waited for is received */
            s->rx_mac_finishing = false;
        }
        if (!(s->mac_rx & L7_MAC_RX_RXEN)) {
            s->mac_rx |= L7_MAC_RX_RXD;
        }
    } else if (op == L7O_MAC_TXD) {
        if (s->tx_mac_finishing) {
            l7_tx_kick(s);      /* the frame waited for is sent */
            s->tx_mac_finishing = false;
        }
        if (!(s->mac_tx & L7_MAC_TX_TXEN)) {
            s->mac_tx |= L7_MAC_TX_TXD;
        }
    }
    /* resets: the effect happened at the write, only the busy bit ends */
}

/*
 * The frame on the wire now, that a stop or disable waits for: when its
 * last bit is due (in the paced schedule's time, i.e. when it is handed
 * over), or 0 when there is none.  RX: the frame QEMU offered and the
 * model booked and holds until it has come off the wire; it is on the
 * wire from its booked start on (before that the receiver is idle).  TX:
 * the frame (TSO chain) held in the TX FIFO once it has started.
 * Unpaced (rate 0) there is no wire: never.
 */
static int64_t l7_rx_on_wire(Lan7430State *s, int64_t now)
{
    if (!s->rate_mbps || !s->rx_reserved || s->rx_held_due <= now ||
        s->rx_held_due - s->rx_held_ns > now) {
        return 0;
    }
    return s->rx_held_due;
}

static int64_t l7_tx_on_wire(Lan7430State *s, int64_t now)
{
    if (!s->rate_mbps || !s->tx_held || s->tx_held_due <= now ||
        s->tx_held_due - s->tx_held_ns > now) {
        return 0;
    }
    return s->tx_held_due;
}

/*
 * The traffic-driven part of operation op: when the frame it waits for
 * ends (0: none, done at once), marking that frame as one still taken.
 * MAC RX/TX disable: the frame on the wire.  RX DMA stop: the frame on
 * the wire that RSS sends to the channel, if it would go straight to the
 * ring (the FIFO is empty): the model DMAs a frame cut-through, as it
 * comes off the wire, and writes it back when it has.  TX DMA stop: none
 * (the model fetches a frame into the TX FIFO at once).
 */
static int64_t l7_op_traffic_end(Lan7430State *s, int op, int64_t now)
{
    int64_t end = 0;

    if (op == L7O_MAC_RXD) {
        end = l7_rx_on_wire(s, now);
        s->rx_mac_finishing = end != 0;
    } else if (op == L7O_MAC_TXD) {
        end = l7_tx_on_wire(s, now);
        s->tx_mac_finishing = end != 0;
    } else if (op >= L7O_RX_STOP && op < L7O_TX_STOP) {
        int ch = op - L7O_RX_STOP;

        if (s->rx_held_ch == ch && QSIMPLEQ_EMPTY(&s->rxf[ch].q) &&
            l7_rx_enabled(s)) {
            end = l7_rx_on_wire(s, now);
        }
        if (end) {
            s->rx_dma_finishing |= 1u << ch;
        }
    }
    return end;
}

/*
 * start the operation in slot op: it completes when the frame it waits
 * for ends (see above), plus its kind's fixed time (property *-us)
 */
void l7_op_start(Lan7430State *s, int op)
{
    int kind = l7_op_kind(op);
    uint32_t us = s->async_us[kind];
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t due = MAX(l7_op_traffic_end(s, op, now), now) +
                  (int64_t)us * SCALE_US;

    s->cnt.async_started[kind]++;
    s->op_t0[op] = now;
    trace_lan743x_async_start(l7_async_names[kind], op, (due - now) / 1000);
    if (due <= now) {
        l7_op_complete(s, op);
        return;
    }
    s->op_due[op] = due;
    l7_op_rearm(s);
}

/* the operation in slot op ends without completing (START, RXEN, reset) */
static void l7_op_cancel(Lan7430State *s, int op)
{
    if (op == L7O_MAC_RXD) {
        s->rx_mac_finishing = false;
    } else if (op == L7O_MAC_TXD) {
        s->tx_mac_finishing = false;
    } else if (op >= L7O_RX_STOP && op < L7O_TX_STOP) {
        s->rx_dma_finishing &= ~(1u << (op - L7O_RX_STOP));
    }
    if (s->op_due[op]) {
        s->op_due[op] = 0;
        l7_op_rearm(s);
    }
}

/*
 * Ring registers (base, head write-back address) of a channel written: a
 * write-back pending from before lands in a ring the driver has given up
 * (and may have freed): counted when written (wb_freed_ring_writes).
 */
void l7_ring_regs_written(Lan7430State *s, hwaddr addr)
{
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (addr == L7_RX_BASE_ADDRH(ch) || addr == L7_RX_BASE_ADDRL(ch) ||
            addr == L7_RX_HEAD_WB_ADDRH(ch) ||
            addr == L7_RX_HEAD_WB_ADDRL(ch)) {
            s->rx_ring_gen[ch]++;
        }
    }
    for (ch = 0; ch < s->ntx; ch++) {
        if (addr == L7_TX_BASE_ADDRH(ch) || addr == L7_TX_BASE_ADDRL(ch) ||
            addr == L7_TX_HEAD_WB_ADDRH(ch) ||
            addr == L7_TX_HEAD_WB_ADDRL(ch)) {
            s->tx_ring_gen[ch]++;
        }
    }
}

void l7_op_timer_cb(void *opaque)
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
    l7_tx_kick(s);
}

/* a register read that shows an operation still in progress */
void l7_op_busy_read(Lan7430State *s, int first, int n)
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
uint32_t l7_dmac_cmd_busy(Lan7430State *s)
{
    uint32_t v = 0;
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (s->op_due[L7O_RX_SWR + ch]) {
            v |= L7_DMAC_CMD_RX_SWR(ch);
        }
    }
    for (ch = 0; ch < s->ntx; ch++) {
        if (s->op_due[L7O_TX_SWR + ch]) {
            v |= L7_DMAC_CMD_TX_SWR(ch);
        }
    }
    if (s->op_due[L7O_DMAC_SWR]) {
        v |= L7_DMAC_CMD_SWR;
    }
    return v;
}

uint32_t l7_fct_rx_busy(Lan7430State *s)
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
void l7_dmac_cmd_write(Lan7430State *s, uint32_t val)
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
            /* the documented sequence (driver close/open) disables the
             * channel's FIFO before its DMA channel reset; what the silicon
             * does with frames the FIFO holds or takes meanwhile is not
             * documented: flagged, not modelled */
            if (s->fct_rx_en & L7_FCT_RX_CTL_EN(ch)) {
                s->cnt.rx_swr_fifo_enabled++;
                trace_lan743x_rx_swr_fifo_enabled(ch);
            }
            l7_op_cancel(s, L7O_RX_STOP + ch);
            l7_dma_rx_reset(s, ch);
            l7_op_start(s, L7O_RX_SWR + ch);
            /* rx-swr-head: the reset leaves RX_HEAD non-zero (the check
             * after it in the driver's open fails) */
            if (l7_fault_hit(s, L7F_RX_SWR_HEAD)) {
                s->rx_swr_bad |= 1u << ch;
                trace_lan743x_fault_rx_swr_head(ch);
            }
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
    for (ch = 0; ch < s->ntx; ch++) {
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
void l7_fct_rx_write(Lan7430State *s, uint32_t val)
{
    int ch;

    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (val & L7_FCT_RX_CTL_RESET(ch)) {
            l7_rx_fifo_flush(s, ch, false);
            s->fct_int_sts &= ~L7_FCT_INT_RDFO(ch);
            l7_op_start(s, L7O_FCT_RX_RST + ch);
        }
        if (val & L7_FCT_RX_CTL_EN(ch)) {
            if (s->fifo_off_since[ch]) {
                s->cnt.rx_fifo_off_ns[ch] += qemu_clock_get_ns(
                    QEMU_CLOCK_VIRTUAL) - s->fifo_off_since[ch];
                s->fifo_off_since[ch] = 0;
            }
            s->fct_rx_en |= L7_FCT_RX_CTL_EN(ch);
        }
        if (val & L7_FCT_RX_CTL_DIS(ch)) {
            if (s->fct_rx_en & L7_FCT_RX_CTL_EN(ch)) {
                s->fifo_off_since[ch] =
                    MAX(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL), 1);
            }
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
void l7_mac_en_write(Lan7430State *s, uint32_t *reg, uint32_t val,
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
bool l7_tail_check(Lan7430State *s, const char *dir, int ch,
                   uint32_t idx, uint32_t ring, hwaddr err_reg)
{
    if (!s->desc_check || !ring || idx < ring) {
        return false;
    }
    s->cnt.desc_tail_errors++;
    trace_lan743x_desc_tail_err(dir, ch, idx, ring);
    l7_desc_error(s, err_reg == L7_DMAC_TX_ERR_STS(ch), ch, L7DE_TAIL, idx);
    return true;
}

/*
 * A descriptor error (desc-check): its bit in the channel's
 * DMAC_RX/TX_ERR_STS (layout from Microchip's 2017 lan743x.h),
 * DMAC_INT_STS.ERR (INT_STS.DMA_GEN, an interrupt if the driver enabled
 * it), and, except for a refused tail, the channel stops: DMAC_CMD reads
 * START clear, STOP set, until the driver starts it again.  Which bit a
 * length error sets is not documented: DESC_READ_ERR (assumption).
 */
void l7_desc_error(Lan7430State *s, bool tx, int ch, int kind,
                   uint32_t idx)
{
    static const uint32_t bits[L7DE_NUM] = {
        [L7DE_TAIL] = L7_DMAC_ERR_DESC_TAIL,
        [L7DE_RX_OWN] = L7_DMAC_ERR_DESC_READ,
        [L7DE_TX_NOFS] = L7_DMAC_TX_ERR_NOFS,
        [L7DE_TX_EXTRAFS] = L7_DMAC_TX_ERR_EXTRAFS,
        [L7DE_TX_EXT_MISSING] = L7_DMAC_TX_ERR_EXTNTYPE,
        [L7DE_TX_DATA_MISSING] = L7_DMAC_TX_ERR_DATATYPE,
        [L7DE_TX_LEN] = L7_DMAC_ERR_DESC_READ,
    };
    hwaddr reg = tx ? L7_DMAC_TX_ERR_STS(ch) : L7_DMAC_RX_ERR_STS(ch);

    s->regs[reg >> 2] |= bits[kind];
    s->dmac_int_sts |= L7_DMAC_INT_ERR;
    s->cnt.desc_errors++;
    s->cnt.desc_err_kind[kind]++;
    if (kind != L7DE_TAIL) {
        trace_lan743x_desc_err(tx ? "tx" : "rx", ch, l7_desc_err_names[kind],
                               idx);
        l7_op_cancel(s, (tx ? L7O_TX_STOP : L7O_RX_STOP) + ch);
        s->dmac_run &= ~(tx ? L7_DMAC_CMD_START_T(ch) :
                              L7_DMAC_CMD_START_R(ch));
        s->dmac_stop |= tx ? L7_DMAC_CMD_STOP_T(ch) : L7_DMAC_CMD_STOP_R(ch);
    }
    l7_update_irq(s);
}
