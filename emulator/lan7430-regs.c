/*
 * QEMU model of the Microchip LAN7430: register (MMIO) dispatch.
 *
 * A compilation unit of the model: the shared state and the functions other
 * units call are declared in lan7430-int.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "lan7430-int.h"
#include "trace.h"

/* ------------------------------------------------------------------------ */
/* MMIO                                                                      */

/*
 * Register dispatch by table, as QEMU's e1000e and igb cores do: one read
 * and one write handler per 32-bit register, indexed by offset / 4.  A
 * register without a handler (or beyond the tables) reads its value in
 * regs[], and a write stores it there (after l7_ring_regs_written).  The
 * per-channel blocks (RX_CFG_A(ch)..., TX_CFG_A(ch)..., 64 bytes each)
 * dispatch to one handler per block, which finds the channel.
 */
typedef uint32_t (*L7RegRead)(Lan7430State *s, hwaddr addr);
typedef void (*L7RegWrite)(Lan7430State *s, hwaddr addr, uint32_t val);

#define L7_RI(addr)         ((addr) >> 2)
#define L7_NREGOPS          (L7_RI(L7_STAT_LAST) + 1)
#define L7_CH_STRIDE        64
#define L7_RX_CH_OF(addr)   ((int)(((addr) - L7_RX_CFG_A(0)) / L7_CH_STRIDE))
#define L7_TX_CH_OF(addr)   ((int)(((addr) - L7_TX_CFG_A(0)) / L7_CH_STRIDE))
#define L7_RX_BLOCK         L7_RI(L7_RX_CFG_A(0)) ... \
                            L7_RI(L7_RX_CFG_A(L7_NUM_RX_CH)) - 1
#define L7_TX_BLOCK         L7_RI(L7_TX_CFG_A(0)) ... \
                            L7_RI(L7_TX_CFG_A(L7_MAX_TX_CH)) - 1

QEMU_BUILD_BUG_ON(L7_RX_CFG_A(1) - L7_RX_CFG_A(0) != L7_CH_STRIDE);
QEMU_BUILD_BUG_ON(L7_TX_CFG_A(1) - L7_TX_CFG_A(0) != L7_CH_STRIDE);
QEMU_BUILD_BUG_ON(L7_RX_CFG_A(L7_NUM_RX_CH) > L7_TX_CFG_A(0));
QEMU_BUILD_BUG_ON(L7_TX_CFG_A(L7_MAX_TX_CH) > L7_OTP_PWR_DN);

/* ---- reads ---- */

static uint32_t l7_r_zero(Lan7430State *s, hwaddr addr)
{
    return 0;                   /* FPGA_REV, STRAP, INT_SET, OTP: blank */
}

static uint32_t l7_r_id_rev(Lan7430State *s, hwaddr addr)
{
    return s->id_rev;
}

static uint32_t l7_r_int_sts(Lan7430State *s, hwaddr addr)
{
    return l7_int_sts(s);
}

static uint32_t l7_r_int_sts_r2c(Lan7430State *s, hwaddr addr)
{
    uint32_t clr_en = 0;
    uint32_t val = l7_int_sts(s);
    int ch;

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
    for (ch = 0; ch < s->ntx; ch++) {
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
    return val;
}

static uint32_t l7_r_int_en(Lan7430State *s, hwaddr addr)
{
    return s->int_en;
}

static uint32_t l7_r_vec_en(Lan7430State *s, hwaddr addr)
{
    return s->vec_en;
}

static uint32_t l7_r_vec_auto_clr(Lan7430State *s, hwaddr addr)
{
    return s->vec_auto_clr;
}

static uint32_t l7_r_vec_map(Lan7430State *s, hwaddr addr)
{
    return s->vec_map[(addr - L7_INT_VEC_MAP0) >> 2];
}

static uint32_t l7_r_mod_map(Lan7430State *s, hwaddr addr)
{
    return s->mod_map[(addr - L7_INT_MOD_MAP0) >> 2];
}

static uint32_t l7_r_mod_cfg(Lan7430State *s, hwaddr addr)
{
    return s->mod_cfg[(addr - L7_INT_MOD_CFG0) >> 2];
}

static uint32_t l7_r_dp_sel(Lan7430State *s, hwaddr addr)
{
    return l7_reg(s, addr) | L7_DP_SEL_DPRDY;
}

static uint32_t l7_r_mac_rx(Lan7430State *s, hwaddr addr)
{
    uint32_t val = s->mac_rx;

    l7_op_busy_read(s, L7O_MAC_RXD, 1);
    return val;
}

static uint32_t l7_r_mac_tx(Lan7430State *s, hwaddr addr)
{
    uint32_t val = s->mac_tx;

    l7_op_busy_read(s, L7O_MAC_TXD, 1);
    return val;
}

static uint32_t l7_r_fct_rx_ctl(Lan7430State *s, hwaddr addr)
{
    uint32_t val = s->fct_rx_en | l7_fct_rx_busy(s);

    l7_op_busy_read(s, L7O_FCT_RX_RST, L7_NUM_RX_CH);
    return val;
}

static uint32_t l7_r_fct_tx_ctl(Lan7430State *s, hwaddr addr)
{
    uint32_t val = s->fct_tx_en;
    int ch;

    for (ch = 0; ch < s->ntx; ch++) {
        if (s->op_due[L7O_FCT_TX_RST + ch]) {
            val |= L7_FCT_TX_CTL_RESET(ch);
        }
    }
    l7_op_busy_read(s, L7O_FCT_TX_RST, s->ntx);
    return val;
}

static uint32_t l7_r_fct_int_sts(Lan7430State *s, hwaddr addr)
{
    return s->fct_int_sts;
}

static uint32_t l7_r_fct_rx_used(Lan7430State *s, hwaddr addr)
{
    /* fill level (H1: a 16-bit field; unit unknown, bytes here) */
    return s->rxf[(addr - L7_FCT_RX_USED(0)) >> 2].used & 0xFFFF;
}

static uint32_t l7_r_dmac_cmd(Lan7430State *s, hwaddr addr)
{
    uint32_t val = s->dmac_run | s->dmac_stop | l7_dmac_cmd_busy(s);

    l7_op_busy_read(s, L7O_RX_STOP, L7O_DMAC_SWR + 1);
    return val;
}

static uint32_t l7_r_dmac_int_sts(Lan7430State *s, hwaddr addr)
{
    return s->dmac_int_sts;
}

static uint32_t l7_r_dmac_int_en(Lan7430State *s, hwaddr addr)
{
    return s->dmac_int_en;
}

static uint32_t l7_r_ptp_cmd(Lan7430State *s, hwaddr addr)
{
    return s->ptp_enabled ? L7_PTP_CMD_ENABLE : 0;
}

/* RX channel block: head and tail are the model's, the rest storage */
static uint32_t l7_r_rx_ch(Lan7430State *s, hwaddr addr)
{
    int ch = L7_RX_CH_OF(addr);

    if (addr == L7_RX_HEAD(ch)) {
        return (s->rx_swr_bad & (1u << ch)) ? 1 : s->rx_head[ch];
    }
    if (addr == L7_RX_TAIL(ch)) {
        return s->rx_tail_reg[ch];
    }
    return l7_reg(s, addr);
}

/* TX channel block: the same for the variant's channels */
static uint32_t l7_r_tx_ch(Lan7430State *s, hwaddr addr)
{
    int ch = L7_TX_CH_OF(addr);

    if (ch < s->ntx && addr == L7_TX_HEAD(ch)) {
        return s->tx_head[ch];
    }
    if (ch < s->ntx && addr == L7_TX_TAIL(ch)) {
        return s->tx_tail_reg[ch];
    }
    return l7_reg(s, addr);
}

static const L7RegRead l7_readops[L7_NREGOPS] = {
    [L7_RI(L7_ID_REV)]              = l7_r_id_rev,
    [L7_RI(L7_FPGA_REV)]            = l7_r_zero,
    [L7_RI(L7_STRAP_READ)]          = l7_r_zero,
    [L7_RI(L7_INT_STS)]             = l7_r_int_sts,
    [L7_RI(L7_INT_STS_R2C)]         = l7_r_int_sts_r2c,
    [L7_RI(L7_INT_SET)]             = l7_r_zero,
    [L7_RI(L7_INT_EN_SET)]          = l7_r_int_en,
    [L7_RI(L7_INT_EN_CLR)]          = l7_r_int_en,
    [L7_RI(L7_INT_VEC_EN_SET)]      = l7_r_vec_en,
    [L7_RI(L7_INT_VEC_EN_CLR)]      = l7_r_vec_en,
    [L7_RI(L7_INT_VEC_EN_AUTO_CLR)] = l7_r_vec_auto_clr,
    [L7_RI(L7_INT_VEC_MAP0)]        = l7_r_vec_map,
    [L7_RI(L7_INT_VEC_MAP1)]        = l7_r_vec_map,
    [L7_RI(L7_INT_VEC_MAP2)]        = l7_r_vec_map,
    [L7_RI(L7_INT_MOD_MAP0)]        = l7_r_mod_map,
    [L7_RI(L7_INT_MOD_MAP1)]        = l7_r_mod_map,
    [L7_RI(L7_INT_MOD_MAP2)]        = l7_r_mod_map,
    [L7_RI(L7_INT_MOD_CFG0) ...
     L7_RI(L7_INT_MOD_CFG0) + L7_INT_MOD_NUM - 1] = l7_r_mod_cfg,
    [L7_RI(L7_DP_SEL)]              = l7_r_dp_sel,
    [L7_RI(L7_MAC_RX)]              = l7_r_mac_rx,
    [L7_RI(L7_MAC_TX)]              = l7_r_mac_tx,
    [L7_RI(L7_FCT_RX_CTL)]          = l7_r_fct_rx_ctl,
    [L7_RI(L7_FCT_TX_CTL)]          = l7_r_fct_tx_ctl,
    [L7_RI(L7_FCT_INT_STS)]         = l7_r_fct_int_sts,
    [L7_RI(L7_FCT_RX_USED(0)) ...
     L7_RI(L7_FCT_RX_USED(L7_NUM_RX_CH - 1))] = l7_r_fct_rx_used,
    [L7_RI(L7_DMAC_CMD)]            = l7_r_dmac_cmd,
    [L7_RI(L7_DMAC_INT_STS)]        = l7_r_dmac_int_sts,
    [L7_RI(L7_DMAC_INT_EN_SET)]     = l7_r_dmac_int_en,
    [L7_RI(L7_DMAC_INT_EN_CLR)]     = l7_r_dmac_int_en,
    [L7_RX_BLOCK]                   = l7_r_rx_ch,
    [L7_TX_BLOCK]                   = l7_r_tx_ch,
    [L7_RI(L7_PTP_CMD_CTL)]         = l7_r_ptp_cmd,
    [L7_RI(L7_OTP_STATUS)]          = l7_r_zero,
    [L7_RI(L7_OTP_READ_DATA)]       = l7_r_zero,
};

static uint64_t lan7430_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    Lan7430State *s = opaque;
    uint32_t val;

    addr &= ~3;
    s->cnt.reg_reads[addr >> 2]++;
    if (l7_reg(s, L7_DMAC_COAL_CFG) & L7_DMAC_COAL_CFG_CSR_EXIT) {
        l7_coal_exit(s, 2);             /* a CSR access ends coalescing */
    }
    if (L7_RI(addr) < L7_NREGOPS && l7_readops[L7_RI(addr)]) {
        val = l7_readops[L7_RI(addr)](s, addr);
    } else {
        val = l7_reg(s, addr);
    }
    trace_lan743x_mmio_read(addr, val);
    return val;
}

/* ---- writes ---- */

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

/* a register without special behaviour: plain storage */
static void l7_w_store(Lan7430State *s, hwaddr addr, uint32_t val)
{
    l7_ring_regs_written(s, addr);
    s->regs[addr >> 2] = val;
}

/* read-only registers (ID, straps, INT_STS_R2C, statistics), OTP_CMD_GO */
static void l7_w_ignore(Lan7430State *s, hwaddr addr, uint32_t val)
{
}

static void l7_w_hw_cfg(Lan7430State *s, hwaddr addr, uint32_t val)
{
    if (val & L7_HW_CFG_LRST) {
        l7_soft_reset(s);
        return;             /* LRST self clears */
    }
    s->regs[addr >> 2] = val;
}

static void l7_w_pmt_ctl(Lan7430State *s, hwaddr addr, uint32_t val)
{
    if (val & L7_PMT_CTL_PHY_RST) {
        l7_phy_reset(s);
    }
    s->regs[addr >> 2] = (val & ~L7_PMT_CTL_PHY_RST) | L7_PMT_CTL_READY;
}

static void l7_w_dp_cmd(Lan7430State *s, hwaddr addr, uint32_t val)
{
    if ((val & 1) && (l7_reg(s, L7_DP_SEL) & 0x1F) == 1) {
        s->dp_ram[l7_reg(s, L7_DP_ADDR) & 0xFF] = l7_reg(s, L7_DP_DATA_0);
    }
}

static void l7_w_e2p_cmd(Lan7430State *s, hwaddr addr, uint32_t val)
{
    /* No EEPROM fitted: every command times out immediately */
    s->regs[addr >> 2] = (val & ~L7_E2P_CMD_BUSY) |
                         ((val & L7_E2P_CMD_BUSY) ? L7_E2P_CMD_TIMEOUT : 0);
}

static void l7_w_fct_rx_ctl(Lan7430State *s, hwaddr addr, uint32_t val)
{
    l7_fct_rx_write(s, val);
    l7_rx_kick(s);
}

static void l7_w_fct_int_sts(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->fct_int_sts &= ~val;
}

static void l7_w_fct_tx_ctl(Lan7430State *s, hwaddr addr, uint32_t val)
{
    int ch;

    for (ch = 0; ch < s->ntx; ch++) {
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
    l7_tx_kick(s);
}

static void l7_w_mac_cr(Lan7430State *s, hwaddr addr, uint32_t val)
{
    if (val & L7_MAC_CR_CNTR_RST) {
        l7_stats_reset(s);
    }
    if (val & L7_MAC_CR_RST) {
        s->mac_rx = (1518u << L7_MAC_RX_MAX_SHIFT) | L7_MAC_RX_RXD;
        s->mac_tx = L7_MAC_TX_TXD;
    }
    s->regs[addr >> 2] = val & ~(L7_MAC_CR_CNTR_RST | L7_MAC_CR_RST);
}

/*
 * MAC_RX.FSE cannot be changed while the receiver is enabled (AN2948 as
 * the driver quotes it in lan743x_mac_rx_enable_fse(): "hardware prevents
 * modification of the FSE bit while the MAC receiver is enabled (RXEN bit
 * set). Use separate register write to assert the FSE bit before enabling
 * the RXEN bit"): with fse-lock=1 a write that changes FSE while RXEN is
 * set, or sets RXEN in the same write, or before a disable has completed
 * (RXD not yet set), keeps the old FSE (counted in mac_fse_refused).
 */
static void l7_w_mac_rx(Lan7430State *s, hwaddr addr, uint32_t val)
{
    if (s->fse_lock && ((val ^ s->mac_rx) & L7_MAC_RX_FSE) &&
        ((s->mac_rx & L7_MAC_RX_RXEN) || (val & L7_MAC_RX_RXEN) ||
         s->op_due[L7O_MAC_RXD])) {
        val = (val & ~L7_MAC_RX_FSE) | (s->mac_rx & L7_MAC_RX_FSE);
        s->cnt.mac_fse_refused++;
    }
    l7_mac_en_write(s, &s->mac_rx, val, L7_MAC_RX_RXD, L7O_MAC_RXD);
    l7_rx_kick(s);
}

static void l7_w_mac_tx(Lan7430State *s, hwaddr addr, uint32_t val)
{
    l7_mac_en_write(s, &s->mac_tx, val, L7_MAC_TX_TXD, L7O_MAC_TXD);
    l7_tx_kick(s);
}

static void l7_w_mii_acc(Lan7430State *s, hwaddr addr, uint32_t val)
{
    if (val & L7_MII_ACC_BUSY) {
        l7_mii_access(s, val);
    }
    s->regs[addr >> 2] = val & ~L7_MII_ACC_BUSY;
}

static void l7_w_int_sts(Lan7430State *s, hwaddr addr, uint32_t val)
{
    int ch;

    s->int_sts &= ~val;
    if (val & L7_INT_BIT_DMA_GEN) {
        s->dmac_int_sts &= ~L7_DMAC_INT_ERR;
    }
    for (ch = 0; ch < L7_NUM_RX_CH; ch++) {
        if (val & L7_INT_BIT_DMA_RX(ch)) {
            s->dmac_int_sts &= ~L7_DMAC_INT_RXFRM(ch);
        }
    }
    for (ch = 0; ch < s->ntx; ch++) {
        if (val & L7_INT_BIT_DMA_TX(ch)) {
            s->dmac_int_sts &= ~L7_DMAC_INT_TX_IOC(ch);
        }
    }
    l7_update_irq(s);
}

static void l7_w_int_set(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->int_sts |= val & ~(L7_INT_BIT_ALL_RX | L7_INT_BIT_ALL_TX |
                          L7_INT_BIT_DMA_GEN | L7_INT_BIT_MAS);
    l7_update_irq(s);
}

static void l7_w_int_en_set(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->int_en |= val;
    l7_update_irq(s);
}

static void l7_w_int_en_clr(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->int_en &= ~val;
    l7_update_irq(s);
}

static void l7_w_vec_en_set(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->vec_en |= val & ((1u << s->nvec) - 1);
    l7_update_irq(s);
}

static void l7_w_vec_en_clr(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->vec_en &= ~val;
    l7_update_irq(s);
}

static void l7_w_vec_auto_clr(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->vec_auto_clr = val & ((1u << s->nvec) - 1);
}

static void l7_w_vec_map(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->vec_map[(addr - L7_INT_VEC_MAP0) >> 2] = val;
    l7_update_irq(s);
}

static void l7_w_mod_map(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->mod_map[(addr - L7_INT_MOD_MAP0) >> 2] = val;
}

static void l7_w_mod_cfg(Lan7430State *s, hwaddr addr, uint32_t val)
{
    int slot = (addr - L7_INT_MOD_CFG0) >> 2;
    L7Counters *c = &s->cnt;
    int i;

    c->int_mod_writes[slot]++;
    if (val != s->mod_cfg[slot]) {
        i = c->int_mod_changes[slot]++ % L7_INT_MOD_LOG;
        c->int_mod_log_ns[slot][i] = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
        c->int_mod_log_val[slot][i] = val;
        trace_lan743x_int_mod_cfg(slot, s->mod_cfg[slot], val);
    }
    s->mod_cfg[slot] = val;
}

static void l7_w_ptp_cmd(Lan7430State *s, hwaddr addr, uint32_t val)
{
    l7_ptp_cmd(s, val);
}

static void l7_w_ptp_int_sts(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->regs[addr >> 2] &= ~val;
}

static void l7_w_ptp_int_en_set(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->regs[L7_PTP_INT_EN_SET >> 2] |= val;
}

static void l7_w_ptp_int_en_clr(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->regs[L7_PTP_INT_EN_SET >> 2] &= ~val;
}

static void l7_w_dmac_cmd(Lan7430State *s, hwaddr addr, uint32_t val)
{
    l7_dmac_cmd_write(s, val);
    l7_rx_kick(s);
    l7_tx_kick(s);
}

static void l7_w_dmac_int_sts(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->dmac_int_sts &= ~val;
    l7_update_irq(s);
}

static void l7_w_dmac_int_en_set(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->dmac_int_en |= val;
    l7_update_irq(s);
}

static void l7_w_dmac_int_en_clr(Lan7430State *s, hwaddr addr, uint32_t val)
{
    s->dmac_int_en &= ~val;
    l7_update_irq(s);
}

/* DMAC_RX_ERR_STS / DMAC_TX_ERR_STS */
static void l7_w_dmac_err_sts(Lan7430State *s, hwaddr addr, uint32_t val)
{
    /* status bits 7:0 write one to clear, enables 31:8 storage */
    s->regs[addr >> 2] = (s->regs[addr >> 2] & 0xFF & ~val) |
                         (val & ~0xFFu);
}

static void l7_w_rx_tail(Lan7430State *s, int ch, uint32_t val)
{
    uint32_t ring = l7_reg(s, L7_RX_CFG_B(ch)) & L7_RX_CFG_B_RING_LEN_MASK;

    bool now = true;

    if (!l7_tail_check(s, "rx", ch, val & 0xFFFF, ring,
                       L7_DMAC_RX_ERR_STS(ch))) {
        now = l7_tail_write(s, false, ch,
                            (val & 0xFFFF) % (ring ? ring : 0x10000));
    }
    if (val & L7_RX_TAIL_SET_TOP_INT_EN) {
        s->int_en |= L7_INT_BIT_DMA_RX(ch);
    }
    if (val & L7_RX_TAIL_SET_TOP_INT_VEC_EN) {
        s->vec_en |= 1u << l7_src_vector(s, 24 + ch);
    }
    l7_update_irq(s);
    if (now) {
        l7_rx_kick(s);
    }
}

static void l7_w_tx_tail(Lan7430State *s, int ch, uint32_t val)
{
    uint32_t ring = l7_reg(s, L7_TX_CFG_B(ch)) & L7_TX_CFG_B_RING_LEN_MASK;

    bool now = true;

    if (!l7_tail_check(s, "tx", ch, val & 0xFFFF, ring,
                       L7_DMAC_TX_ERR_STS(ch))) {
        now = l7_tail_write(s, true, ch,
                            (val & 0xFFFF) % (ring ? ring : 0x10000));
    }
    if (val & L7_TX_TAIL_SET_DMAC_INT_EN) {
        s->dmac_int_en |= L7_DMAC_INT_TX_IOC(ch);
    }
    if (val & L7_TX_TAIL_SET_TOP_INT_EN) {
        s->int_en |= L7_INT_BIT_DMA_TX(ch);
    }
    if (val & L7_TX_TAIL_SET_TOP_INT_VEC_EN) {
        s->vec_en |= 1u << l7_src_vector(s, 16 + ch);
    }
    if (now) {
        l7_tx_process(s, ch);
    }
    l7_update_irq(s);
}

/* RX channel block: head read only, tail, SWFLUSH, error status */
static void l7_w_rx_ch(Lan7430State *s, hwaddr addr, uint32_t val)
{
    int ch = L7_RX_CH_OF(addr);

    if (addr == L7_RX_HEAD(ch)) {
        return;                 /* read only */
    }
    if (addr == L7_RX_CFG_A(ch)) {
        s->regs[addr >> 2] = val & ~L7_RX_CFG_A_WB_SWFLUSH;
        if (val & L7_RX_CFG_A_WB_SWFLUSH) {
            l7_rx_batch_flush(s, ch, L7B_SWFLUSH);
        }
        return;
    }
    if (addr == L7_DMAC_RX_ERR_STS(ch)) {
        l7_w_dmac_err_sts(s, addr, val);
        return;
    }
    if (addr == L7_RX_TAIL(ch)) {
        l7_w_rx_tail(s, ch, val);
        return;
    }
    l7_w_store(s, addr, val);
}

/* TX channel block: the same for the variant's channels */
static void l7_w_tx_ch(Lan7430State *s, hwaddr addr, uint32_t val)
{
    int ch = L7_TX_CH_OF(addr);

    if (ch >= s->ntx) {
        l7_w_store(s, addr, val);
    } else if (addr == L7_TX_HEAD(ch)) {
        return;                 /* read only */
    } else if (addr == L7_DMAC_TX_ERR_STS(ch)) {
        l7_w_dmac_err_sts(s, addr, val);
    } else if (addr == L7_TX_TAIL(ch)) {
        l7_w_tx_tail(s, ch, val);
    } else {
        l7_w_store(s, addr, val);
    }
}

static const L7RegWrite l7_writeops[L7_NREGOPS] = {
    [L7_RI(L7_ID_REV)]              = l7_w_ignore,
    [L7_RI(L7_FPGA_REV)]            = l7_w_ignore,
    [L7_RI(L7_STRAP_READ)]          = l7_w_ignore,
    [L7_RI(L7_HW_CFG)]              = l7_w_hw_cfg,
    [L7_RI(L7_PMT_CTL)]             = l7_w_pmt_ctl,
    [L7_RI(L7_DP_CMD)]              = l7_w_dp_cmd,
    [L7_RI(L7_E2P_CMD)]             = l7_w_e2p_cmd,
    [L7_RI(L7_FCT_RX_CTL)]          = l7_w_fct_rx_ctl,
    [L7_RI(L7_FCT_INT_STS)]         = l7_w_fct_int_sts,
    [L7_RI(L7_FCT_TX_CTL)]          = l7_w_fct_tx_ctl,
    [L7_RI(L7_MAC_CR)]              = l7_w_mac_cr,
    [L7_RI(L7_MAC_RX)]              = l7_w_mac_rx,
    [L7_RI(L7_MAC_TX)]              = l7_w_mac_tx,
    [L7_RI(L7_MAC_MII_ACC)]         = l7_w_mii_acc,
    [L7_RI(L7_INT_STS)]             = l7_w_int_sts,
    [L7_RI(L7_INT_SET)]             = l7_w_int_set,
    [L7_RI(L7_INT_EN_SET)]          = l7_w_int_en_set,
    [L7_RI(L7_INT_EN_CLR)]          = l7_w_int_en_clr,
    [L7_RI(L7_INT_STS_R2C)]         = l7_w_ignore,
    [L7_RI(L7_INT_VEC_EN_SET)]      = l7_w_vec_en_set,
    [L7_RI(L7_INT_VEC_EN_CLR)]      = l7_w_vec_en_clr,
    [L7_RI(L7_INT_VEC_EN_AUTO_CLR)] = l7_w_vec_auto_clr,
    [L7_RI(L7_INT_VEC_MAP0)]        = l7_w_vec_map,
    [L7_RI(L7_INT_VEC_MAP1)]        = l7_w_vec_map,
    [L7_RI(L7_INT_VEC_MAP2)]        = l7_w_vec_map,
    [L7_RI(L7_INT_MOD_MAP0)]        = l7_w_mod_map,
    [L7_RI(L7_INT_MOD_MAP1)]        = l7_w_mod_map,
    [L7_RI(L7_INT_MOD_MAP2)]        = l7_w_mod_map,
    [L7_RI(L7_INT_MOD_CFG0) ...
     L7_RI(L7_INT_MOD_CFG0) + L7_INT_MOD_NUM - 1] = l7_w_mod_cfg,
    [L7_RI(L7_PTP_CMD_CTL)]         = l7_w_ptp_cmd,
    [L7_RI(L7_PTP_INT_STS)]         = l7_w_ptp_int_sts,
    [L7_RI(L7_PTP_INT_EN_SET)]      = l7_w_ptp_int_en_set,
    [L7_RI(L7_PTP_INT_EN_CLR)]      = l7_w_ptp_int_en_clr,
    [L7_RI(L7_DMAC_CMD)]            = l7_w_dmac_cmd,
    [L7_RI(L7_DMAC_INT_STS)]        = l7_w_dmac_int_sts,
    [L7_RI(L7_DMAC_INT_EN_SET)]     = l7_w_dmac_int_en_set,
    [L7_RI(L7_DMAC_INT_EN_CLR)]     = l7_w_dmac_int_en_clr,
    [L7_RX_BLOCK]                   = l7_w_rx_ch,
    [L7_TX_BLOCK]                   = l7_w_tx_ch,
    [L7_RI(L7_OTP_CMD_GO)]          = l7_w_ignore,
    [L7_RI(L7_STAT_FIRST) ...
     L7_RI(L7_STAT_LAST)]           = l7_w_ignore,  /* statistics: RO */
};

static void lan7430_mmio_write(void *opaque, hwaddr addr, uint64_t val64,
                               unsigned size)
{
    Lan7430State *s = opaque;
    uint32_t val = val64;

    addr &= ~3;
    s->cnt.reg_writes[addr >> 2]++;
    if (l7_reg(s, L7_DMAC_COAL_CFG) & L7_DMAC_COAL_CFG_CSR_EXIT) {
        l7_coal_exit(s, 2);
    }
    trace_lan743x_mmio_write(addr, val);
    if (L7_RI(addr) < L7_NREGOPS && l7_writeops[L7_RI(addr)]) {
        l7_writeops[L7_RI(addr)](s, addr, val);
    } else {
        l7_w_store(s, addr, val);
    }
}

const MemoryRegionOps lan7430_mmio_ops = {
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
