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
        val = s->fct_tx_en;
        for (ch = 0; ch < s->ntx; ch++) {
            if (s->op_due[L7O_FCT_TX_RST + ch]) {
                val |= L7_FCT_TX_CTL_RESET(ch);
            }
        }
        l7_op_busy_read(s, L7O_FCT_TX_RST, s->ntx);
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
                val = (s->rx_swr_bad & (1u << ch)) ? 1 : s->rx_head[ch];
                goto done;
            }
            if (addr == L7_RX_TAIL(ch)) {
                val = s->rx_tail[ch];
                goto done;
            }
        }
        for (ch = 0; ch < s->ntx; ch++) {
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
        l7_tx_kick(s);
        return;
    case L7_MAC_MII_ACC:
        if (val & L7_MII_ACC_BUSY) {
            l7_mii_access(s, val);
        }
        s->regs[addr >> 2] = val & ~L7_MII_ACC_BUSY;
        return;
    case L7_INT_STS:
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
        return;
    case L7_INT_SET:
        s->int_sts |= val & ~(L7_INT_BIT_ALL_RX | L7_INT_BIT_ALL_TX |
                              L7_INT_BIT_DMA_GEN | L7_INT_BIT_MAS);
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
        s->vec_en |= val & ((1u << s->nvec) - 1);
        l7_update_irq(s);
        return;
    case L7_INT_VEC_EN_CLR:
        s->vec_en &= ~val;
        l7_update_irq(s);
        return;
    case L7_INT_VEC_EN_AUTO_CLR:
        s->vec_auto_clr = val & ((1u << s->nvec) - 1);
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
        l7_tx_kick(s);
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
            (ch < s->ntx && addr == L7_DMAC_TX_ERR_STS(ch))) {
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
                s->vec_en |= 1u << (l7_src_nibble(s->vec_map, 24 + ch) %
                                    s->nvec);
            }
            l7_update_irq(s);
            l7_rx_kick(s);
            return;
        }
    }
    for (ch = 0; ch < s->ntx; ch++) {
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
                s->vec_en |= 1u << (l7_src_nibble(s->vec_map, 16 + ch) %
                                    s->nvec);
            }
            l7_tx_process(s, ch);
            l7_update_irq(s);
            return;
        }
    }
    if (addr >= L7_STAT_FIRST && addr <= L7_STAT_LAST) {
        return;                 /* statistics are read only */
    }
    l7_ring_regs_written(s, addr);
    s->regs[addr >> 2] = val;
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
