/*
 * QEMU model of the Microchip LAN7430: internal LAN88xx PHY and MDIO.
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
/* PHY (LAN88xx compatible, c22 with indirect MMD and page select)           */
/*                                                                          */
/* The LAN7430's internal PHY at address 1, or (lan7431) an external RGMII  */
/* PHY at s->phy_addr: the same IEEE registers 0-15, the identifier of the  */
/* variant's PHY (registers 2/3); the vendor registers 16-31 stay storage.  */

void l7_phy_reset(Lan7430State *s)
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
        return s->var->phy_id1;
    case 3:
        return s->var->phy_id2;
    case 4:
        return p->adv;
    case 5: {
        /* the partner: 10/100 half/full, ACK, NP; pause as phy-lp-pause */
        uint16_t lpa = L7_PHY_LPA_BASE |
                       (s->phy_lp_pause ? L7_PHY_LPA_PAUSE : 0);

        return (link && an) ? lpa : 0;
    }
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

void l7_mii_access(Lan7430State *s, uint32_t acc)
{
    int phy = (acc >> L7_MII_ACC_PHY_SHIFT) & 0x1F;
    int reg = (acc >> L7_MII_ACC_REG_SHIFT) & 0x1F;
    bool wr = acc & L7_MII_ACC_WRITE;
    uint16_t val;

    if (acc & L7_MII_ACC_CL45) {
        /* No clause 45 devices on the MDIO bus (RGMII: C22 only) */
        if (!wr) {
            s->regs[L7_MAC_MII_DATA >> 2] = 0xFFFF;
        }
        return;
    }
    if (phy != s->phy_addr) {
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
