/*
 * QTest for the LAN7430 model
 *
 * register defaults after reset, MDIO read of the PHY ID, one RX and one TX
 * descriptor round trip with the expected write-back, interrupt auto-clear
 * and MSI-X vector mapping; the QMP counters, every fault injection knob and
 * the wire pacing ("rate").
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <sys/socket.h>
#include "libqtest.h"
#include "libqos/libqos-pc.h"
#include "libqos/pci.h"
#include "standard-headers/linux/pci_regs.h"
#include "qemu/bswap.h"
#include "qemu/iov.h"
#include "qemu/sockets.h"
#include "qapi/qmp/qdict.h"
#include "qapi/qmp/qjson.h"
#include "qapi/qmp/qlist.h"
#include "qapi/qmp/qstring.h"
#include "qapi/qmp/qnum.h"
#include "qapi/error.h"

#define ID_REV              0x000
#define HW_CFG              0x010
#define PMT_CTL             0x014
#define E2P_CMD             0x040
#define FCT_RX_CTL          0x0AC
#define FCT_TX_CTL          0x0C4
#define FCT_INT_STS         0x0A0
#define FCT_RX_USED(c)      (0x0B4 + ((c) << 2))
#define FCT_FLOW(c)         (0x0E0 + ((c) << 2))
#define MAC_FLOW            0x10C
#define RFE_RSS_CFG         0x554
#define RFE_INDX(i)         (0x580 + ((i) << 2))
#define DMAC_RX_ERR_STS(c)  (0xC60 + ((c) << 6))
#define DMAC_TX_ERR_STS(c)  (0xD60 + ((c) << 6))
#define STAT_RX_DROPPED     0x1218
#define STAT_RX_UC_BYTES    0x121C
#define STAT_RX_BC_FRAMES   0x122C
#define STAT_RX_MC_FRAMES   0x1230
#define STAT_RX_PAUSE       0x1234
#define STAT_RX_64          0x1238
#define STAT_RX_65_127      0x123C
#define STAT_RX_TOTAL       0x1254
#define STAT_TX_64          0x12BC
#define STAT_TX_PAUSE       0x12B8
#define STAT_TX_TOTAL       0x12D8
#define MAC_RX              0x104
#define MAC_TX              0x108
#define MAC_RX_ADDRH        0x118
#define MAC_RX_ADDRL        0x11C
#define MAC_MII_ACC         0x120
#define MAC_MII_DATA        0x124
#define RFE_ADDR_FILT_HI(x) (0x400 + 8 * (x))
#define RFE_ADDR_FILT_LO(x) (0x404 + 8 * (x))
#define RFE_CTL             0x508
#define INT_STS             0x780
#define INT_SET             0x784
#define INT_EN_SET          0x788
#define INT_EN_CLR          0x78C
#define INT_VEC_EN_SET      0x794
#define INT_VEC_EN_CLR      0x798
#define INT_VEC_EN_AUTO_CLR 0x79C
#define INT_VEC_MAP0        0x7A0
#define INT_VEC_MAP1        0x7A4
#define INT_VEC_MAP2        0x7A8
#define DMAC_CMD            0xC0C
#define DMAC_INT_STS        0xC10
#define DMAC_INT_EN_SET     0xC14
#define INT_MOD_MAP0        0x7B0
#define INT_MOD_MAP2        0x7B8
#define INT_MOD_CFG0        0x7C0
#define RX_CFG_A(c)         (0xC40 + ((c) << 6))
#define RX_CFG_B(c)         (0xC44 + ((c) << 6))
#define RX_BASE_ADDRH(c)    (0xC48 + ((c) << 6))
#define RX_BASE_ADDRL(c)    (0xC4C + ((c) << 6))
#define RX_HWB_ADDRH(c)     (0xC50 + ((c) << 6))
#define RX_HWB_ADDRL(c)     (0xC54 + ((c) << 6))
#define RX_HEAD(c)          (0xC58 + ((c) << 6))
#define RX_TAIL(c)          (0xC5C + ((c) << 6))
#define RX_CFG_C(c)         (0xC64 + ((c) << 6))
#define TX_CFG_A(c)         (0xD40 + ((c) << 6))
#define TX_CFG_B(c)         (0xD44 + ((c) << 6))
#define TX_BASE_ADDRH(c)    (0xD48 + ((c) << 6))
#define TX_BASE_ADDRL(c)    (0xD4C + ((c) << 6))
#define TX_HWB_ADDRH(c)     (0xD50 + ((c) << 6))
#define TX_HWB_ADDRL(c)     (0xD54 + ((c) << 6))
#define TX_HEAD(c)          (0xD58 + ((c) << 6))
#define TX_TAIL(c)          (0xD5C + ((c) << 6))

#define INT_BIT_RX0         (1u << 24)
#define INT_BIT_TX0         (1u << 16)
#define INT_BIT_SW_GP       (1u << 9)
#define INT_BIT_MAS         1u

#define RX_OWN              (1u << 15)
#define RX_FS               (1u << 31)
#define RX_LS               (1u << 30)
#define RX_EXT              (1u << 14)
#define RX_CFG_B_TS_ALL_RX  (1u << 29)

#define MAC_STR             "52:54:00:74:30:01"

typedef struct Ctx {
    QOSState *qs;
    QPCIDevice *dev;
    QPCIBar bar;
    int sock[2];
    uint64_t msix_addr;         /* 16 vectors x 4 bytes of message data */
    uint64_t bar_size;          /* BAR 0 */
    int msix_n;                 /* MSI-X table size */
} Ctx;

static uint32_t rd(Ctx *c, uint32_t off)
{
    return qpci_io_readl(c->dev, c->bar, off);
}

static void wr(Ctx *c, uint32_t off, uint32_t val)
{
    qpci_io_writel(c->dev, c->bar, off, val);
}

/* dev: the -device driver and its options, e.g. "lan7431,phy-addr=5";
 * extra: more QEMU options */
static void ctx_init_args(Ctx *c, bool msix, const char *dev,
                          const char *extra)
{
    int ret = socketpair(PF_UNIX, SOCK_STREAM, 0, c->sock);

    g_assert_cmpint(ret, !=, -1);
    c->qs = qtest_pc_boot("-netdev socket,fd=%d,id=hs0 "
                          "-device %s,id=dut,netdev=hs0,mac=" MAC_STR
                          ",addr=04.0 %s", c->sock[1], dev, extra);
    c->dev = qpci_device_find(c->qs->pcibus, QPCI_DEVFN(4, 0));
    g_assert(c->dev);
    qpci_device_enable(c->dev);
    c->bar = qpci_iomap(c->dev, 0, &c->bar_size);
    {
        uint8_t cap = qpci_find_capability(c->dev, PCI_CAP_ID_MSIX, 0);

        c->msix_n = cap ? (qpci_config_readw(c->dev, cap + PCI_MSIX_FLAGS) &
                           PCI_MSIX_FLAGS_QSIZE) + 1 : 0;
    }
    if (msix) {
        int v;

        qpci_msix_enable(c->dev);
        c->msix_addr = guest_alloc(&c->qs->alloc, 64);
        for (v = 0; v < c->msix_n && v < 16; v++) {
            uint64_t off = c->dev->msix_table_off + v * 16;
            qpci_io_writel(c->dev, c->dev->msix_table_bar, off,
                           (c->msix_addr + 4 * v) & 0xFFFFFFFF);
            qpci_io_writel(c->dev, c->dev->msix_table_bar, off + 4,
                           (c->msix_addr + 4 * v) >> 32);
            qpci_io_writel(c->dev, c->dev->msix_table_bar, off + 8,
                           0x100 + v);
            qpci_io_writel(c->dev, c->dev->msix_table_bar, off + 12, 0);
            qtest_writel(c->qs->qts, c->msix_addr + 4 * v, 0);
        }
    }
}

static void ctx_init_dev(Ctx *c, bool msix, const char *dev)
{
    ctx_init_args(c, msix, dev, "");
}

static void ctx_init(Ctx *c, bool msix)
{
    ctx_init_dev(c, msix, "lan7430");
}

static void ctx_fini(Ctx *c)
{
    if (c->dev->msix_enabled) {
        qpci_msix_disable(c->dev);
    }
    qpci_iounmap(c->dev, c->bar);
    g_free(c->dev);
    qtest_pc_shutdown(c->qs);
    close(c->sock[0]);
}

/* returns and clears the message data seen for vector v (0 = none) */
static uint32_t msix_seen(Ctx *c, int v)
{
    uint32_t d = qtest_readl(c->qs->qts, c->msix_addr + 4 * v);
    qtest_writel(c->qs->qts, c->msix_addr + 4 * v, 0);
    return d;
}

static void prop_set(Ctx *c, const char *prop, uint32_t val);

static void test_reset_defaults(void)
{
    Ctx c;
    uint32_t v;

    ctx_init(&c, false);
    g_assert_cmphex(rd(&c, ID_REV) & 0xFFFF0000, ==, 0x74300000);
    g_assert_cmphex(rd(&c, ID_REV) & 0xFFFF, !=, 0);       /* not A0 */
    g_assert_cmphex(qpci_config_readw(c.dev, PCI_VENDOR_ID), ==, 0x1055);
    g_assert_cmphex(qpci_config_readw(c.dev, PCI_DEVICE_ID), ==, 0x7430);
    g_assert_cmphex(qpci_config_readw(c.dev, PCI_CLASS_DEVICE), ==, 0x0200);

    /* light reset self-clears, MAC address preloaded from mac= */
    wr(&c, HW_CFG, rd(&c, HW_CFG) | 2);
    g_assert_cmphex(rd(&c, HW_CFG) & 2, ==, 0);
    g_assert_cmphex(rd(&c, MAC_RX_ADDRL), ==, 0x74005452);
    g_assert_cmphex(rd(&c, MAC_RX_ADDRH), ==, 0x0130);

    /* PHY reset self-clears and READY is set */
    wr(&c, PMT_CTL, rd(&c, PMT_CTL) | (1u << 4));
    v = rd(&c, PMT_CTL);
    g_assert_cmphex(v & (1u << 4), ==, 0);
    g_assert_cmphex(v & (1u << 7), ==, 1u << 7);

    /* DMAC soft reset self-clears: by default within the write (a few
     * cycles on silicon, dma-reset-us 0) */
    wr(&c, DMAC_CMD, 1u << 31);
    g_assert_cmphex(rd(&c, DMAC_CMD), ==, 0);
    /* ... or after dma-reset-us (here the older model's 10) */
    prop_set(&c, "dma-reset-us", 10);
    wr(&c, DMAC_CMD, 1u << 31);
    g_assert_cmphex(rd(&c, DMAC_CMD), ==, 1u << 31);
    qtest_clock_step(c.qs->qts, 10 * 1000);
    g_assert_cmphex(rd(&c, DMAC_CMD), ==, 0);

    /* MAC_RX default max size 1518, RX disabled status */
    g_assert_cmphex(rd(&c, MAC_RX) >> 16, ==, 1518);
    g_assert_cmphex(rd(&c, MAC_RX) & 1, ==, 0);

    /* interrupts all disabled, nothing pending */
    g_assert_cmphex(rd(&c, INT_EN_SET), ==, 0);
    g_assert_cmphex(rd(&c, INT_STS), ==, 0);
    g_assert_cmphex(rd(&c, RX_HEAD(0)), ==, 0);
    g_assert_cmphex(rd(&c, TX_HEAD(0)), ==, 0);

    /* no EEPROM: a read command reports timeout, not busy */
    wr(&c, E2P_CMD, (1u << 31) | 0);
    v = rd(&c, E2P_CMD);
    g_assert_cmphex(v & (1u << 31), ==, 0);
    g_assert_cmphex(v & (1u << 10), ==, 1u << 10);
    ctx_fini(&c);
}

static uint16_t mdio_read(Ctx *c, int phy, int reg)
{
    wr(c, MAC_MII_ACC, (phy << 11) | (reg << 6) | 1);
    g_assert_cmphex(rd(c, MAC_MII_ACC) & 1, ==, 0);
    return rd(c, MAC_MII_DATA) & 0xFFFF;
}

static void test_mdio_phy_id(void)
{
    Ctx c;

    ctx_init(&c, false);
    g_assert_cmphex(mdio_read(&c, 1, 2), ==, 0x0007);
    g_assert_cmphex(mdio_read(&c, 1, 3) & 0xFFF0, ==, 0xC130);
    g_assert_cmphex(mdio_read(&c, 0, 2), ==, 0xFFFF);    /* no PHY at 0 */
    /* link up, autoneg complete */
    g_assert_cmphex(mdio_read(&c, 1, 1) & 0x24, ==, 0x24);
    ctx_fini(&c);
}

/*
 * Variants (docs/emulator.md): each one's identity as the driver
 * reads it. lan7431: PCI 1055:7431, ID_REV 0x7431xxxx, no internal PHY at 1
 * but an external RGMII PHY (KSZ9031RNX identifier) at phy-addr, default 7;
 * MAC_CR.MII_EN clear, so the driver selects RGMII.
 */
#define MAC_CR              0x100
#define MAC_CR_MII_EN       (1u << 19)

static void check_variant_pci(Ctx *c, uint16_t dev_id, uint32_t id_rev_id)
{
    g_assert_cmphex(qpci_config_readw(c->dev, PCI_VENDOR_ID), ==, 0x1055);
    g_assert_cmphex(qpci_config_readw(c->dev, PCI_DEVICE_ID), ==, dev_id);
    g_assert_cmphex(qpci_config_readw(c->dev, PCI_SUBSYSTEM_VENDOR_ID), ==,
                    0x1055);
    g_assert_cmphex(qpci_config_readw(c->dev, PCI_SUBSYSTEM_ID), ==, dev_id);
    g_assert_cmphex(qpci_config_readw(c->dev, PCI_CLASS_DEVICE), ==, 0x0200);
    g_assert_cmphex(rd(c, ID_REV) & 0xFFFF0000, ==, id_rev_id);
    g_assert_cmphex(rd(c, ID_REV) & 0xFFFF, !=, 0);        /* not A0 */
}

/* the only PHY on the bus is at addr, with identifier id1:id2 */
static void check_mdio_only_phy(Ctx *c, int addr, uint16_t id1, uint16_t id2)
{
    int a;

    for (a = 0; a < 32; a++) {
        if (a == addr) {
            g_assert_cmphex(mdio_read(c, a, 2), ==, id1);
            g_assert_cmphex(mdio_read(c, a, 3), ==, id2);
            /* link up, autoneg complete; 1000BASE-T in extended status */
            g_assert_cmphex(mdio_read(c, a, 1) & 0x0124, ==, 0x0124);
            g_assert_cmphex(mdio_read(c, a, 15) & 0x3000, ==, 0x3000);
        } else {
            g_assert_cmphex(mdio_read(c, a, 2), ==, 0xFFFF);
        }
    }
}

static void test_variant_lan7430(void)
{
    Ctx c;

    ctx_init_dev(&c, false, "lan7430");
    check_variant_pci(&c, 0x7430, 0x74300000);
    check_mdio_only_phy(&c, 1, 0x0007, 0xC132);
    g_assert_cmphex(c.bar_size, ==, 0x2000);
    g_assert_cmpint(c.msix_n, ==, 8);
    ctx_fini(&c);
}

static void test_variant_lan7431(void)
{
    Ctx c;

    ctx_init_dev(&c, false, "lan7431");
    check_variant_pci(&c, 0x7431, 0x74310000);
    check_mdio_only_phy(&c, 7, 0x0022, 0x1622);
    g_assert_cmphex(rd(&c, MAC_CR) & MAC_CR_MII_EN, ==, 0);   /* RGMII */
    g_assert_cmphex(c.bar_size, ==, 0x2000);
    g_assert_cmpint(c.msix_n, ==, 8);
    /* the PHY keeps its address across a light reset and a PHY reset */
    wr(&c, HW_CFG, rd(&c, HW_CFG) | 2);
    wr(&c, PMT_CTL, rd(&c, PMT_CTL) | (1u << 4));
    g_assert_cmphex(mdio_read(&c, 7, 2), ==, 0x0022);
    ctx_fini(&c);
}

static void test_variant_lan7431_phy_addr(void)
{
    Ctx c;

    ctx_init_dev(&c, false, "lan7431,phy-addr=5");
    check_variant_pci(&c, 0x7431, 0x74310000);
    check_mdio_only_phy(&c, 5, 0x0022, 0x1622);
    /* MDIO writes reach the PHY at its address: BMCR power down and back */
    wr(&c, MAC_MII_DATA, 0x1940);
    wr(&c, MAC_MII_ACC, (5 << 11) | (0 << 6) | 2 | 1);
    g_assert_cmphex(mdio_read(&c, 5, 0), ==, 0x1940);
    g_assert_cmphex(mdio_read(&c, 5, 1) & 0x0004, ==, 0);     /* link down */
    wr(&c, MAC_MII_DATA, 0x1140);
    wr(&c, MAC_MII_ACC, (5 << 11) | (0 << 6) | 2 | 1);
    mdio_read(&c, 5, 1);                                      /* latched */
    g_assert_cmphex(mdio_read(&c, 5, 1) & 0x0004, ==, 0x0004);
    ctx_fini(&c);
}

/*
 * PCI11x1x (pci11010, pci11414): identity, the strap path to RGMII, the
 * ETH_SYS block and its semaphore, 16 MSI-X vectors in a 64 KiB BAR.
 */
#define FPGA_REV            0x004
#define STRAP_READ          0x00C
#define ETH_SYS_LOCK        0x40A0
#define ETH_SYS_CFG_LOAD    0x4078

static void check_pci11x1x(const char *dev, uint16_t dev_id, uint32_t id)
{
    Ctx c;

    ctx_init_dev(&c, false, dev);
    check_variant_pci(&c, dev_id, id);
    g_assert_cmphex(rd(&c, ID_REV) & 0xFFFF, ==, 0xB0);      /* B0 */
    g_assert_cmphex(c.bar_size, ==, 0x10000);
    g_assert_cmpint(c.msix_n, ==, 16);
    /* neither SGMII nor RMII strapped, no FPGA: the driver picks RGMII */
    g_assert_cmphex(rd(&c, STRAP_READ), ==, 0);
    g_assert_cmphex(rd(&c, FPGA_REV), ==, 0);
    g_assert_cmphex(rd(&c, ETH_SYS_CFG_LOAD), ==, 0);
    /* hardware semaphore: the ENET lock bit reads back once taken */
    wr(&c, ETH_SYS_LOCK, 1u << 1);
    g_assert_cmphex(rd(&c, ETH_SYS_LOCK) & (1u << 1), ==, 1u << 1);
    wr(&c, ETH_SYS_LOCK, 0);
    g_assert_cmphex(rd(&c, ETH_SYS_LOCK), ==, 0);
    check_mdio_only_phy(&c, 7, 0x0022, 0x1642);
    ctx_fini(&c);
}

static void test_variant_pci11010(void)
{
    check_pci11x1x("pci11010", 0xA011, 0xA0110000);
}

static void test_variant_pci11414(void)
{
    check_pci11x1x("pci11414", 0xA041, 0xA0410000);
}

/* ---- datapath helpers ---- */

#define RING 8

typedef struct Rings {
    uint64_t rx_ring, rx_hwb, rx_buf[RING];
    uint64_t tx_ring, tx_hwb, tx_buf;
} Rings;

/* RX ring of RING descriptors, each owning a blen-byte buffer, and its
 * head write-back word (0xdead until the device writes it) */
static void alloc_rx_ring(Ctx *c, Rings *r, uint32_t blen)
{
    QTestState *q = c->qs->qts;
    int i;

    r->rx_ring = guest_alloc(&c->qs->alloc, RING * 16);
    r->rx_hwb = guest_alloc(&c->qs->alloc, 4);
    qtest_writel(q, r->rx_hwb, 0xdead);
    for (i = 0; i < RING; i++) {
        r->rx_buf[i] = guest_alloc(&c->qs->alloc, 2048);
        qtest_writel(q, r->rx_ring + 16 * i + 4, r->rx_buf[i] & 0xFFFFFFFF);
        qtest_writel(q, r->rx_ring + 16 * i + 8, r->rx_buf[i] >> 32);
        qtest_writel(q, r->rx_ring + 16 * i + 12, 0);
        qtest_writel(q, r->rx_ring + 16 * i + 0, RX_OWN | blen);
    }
}

static void setup_rx_len(Ctx *c, Rings *r, uint32_t cfg_c, uint32_t blen)
{
    alloc_rx_ring(c, r, blen);
    wr(c, DMAC_CMD, 1u << 8);                   /* RX_SWR(0) */
    wr(c, RX_BASE_ADDRH(0), r->rx_ring >> 32);
    wr(c, RX_BASE_ADDRL(0), r->rx_ring & 0xFFFFFFFF);
    wr(c, RX_HWB_ADDRH(0), r->rx_hwb >> 32);
    wr(c, RX_HWB_ADDRL(0), r->rx_hwb & 0xFFFFFFFF);
    wr(c, RX_CFG_A(0), 1u << 5);                /* head write-back */
    wr(c, RX_CFG_B(0), RING);
    wr(c, RX_CFG_C(0), cfg_c);
    wr(c, RX_TAIL(0), RING - 1);
    g_assert_cmpint(rd(c, RX_HEAD(0)), ==, 0);

    /* perfect filter for our MAC, broadcast */
    wr(c, RFE_ADDR_FILT_LO(0), rd(c, MAC_RX_ADDRL));
    wr(c, RFE_ADDR_FILT_HI(0), rd(c, MAC_RX_ADDRH) | (1u << 31));
    wr(c, RFE_CTL, 1u << 10);
    wr(c, DMAC_INT_STS, 1u << 16);
    wr(c, DMAC_INT_EN_SET, 1u << 16);
    wr(c, DMAC_CMD, 1u << 4);                   /* START_R(0) */
    wr(c, FCT_RX_CTL, 1u << 28);
    wr(c, MAC_RX, rd(c, MAC_RX) | 1 | 4);
}

static void setup_rx(Ctx *c, Rings *r, uint32_t cfg_c)
{
    setup_rx_len(c, r, cfg_c, 1536);
}

static uint32_t eth_crc32(const uint8_t *p, size_t len)
{
    uint32_t crc = 0xFFFFFFFF;
    size_t i;
    int b;

    for (i = 0; i < len; i++) {
        crc ^= p[i];
        for (b = 0; b < 8; b++) {
            crc = (crc >> 1) ^ (0xEDB88320 & -(crc & 1));
        }
    }
    return ~crc;
}

static void send_frame(Ctx *c, const uint8_t *buf, size_t len)
{
    uint32_t be = htonl(len);
    struct iovec iov[2] = {
        { .iov_base = &be, .iov_len = 4 },
        { .iov_base = (void *)buf, .iov_len = len },
    };
    g_assert_cmpint(iov_send(c->sock[0], iov, 2, 0, 4 + len), ==, 4 + len);
}

static void make_frame(uint8_t *f, size_t len)
{
    static const uint8_t dst[6] = { 0x52, 0x54, 0x00, 0x74, 0x30, 0x01 };
    size_t i;

    memcpy(f, dst, 6);
    memcpy(f + 6, "\x02\x00\x00\x00\x00\x02", 6);
    f[12] = 0x88;
    f[13] = 0xB5;       /* local experimental ethertype */
    for (i = 14; i < len; i++) {
        f[i] = i & 0xFF;
    }
}

static bool wait_hwb(Ctx *c, uint64_t addr, uint32_t want)
{
    int i;

    for (i = 0; i < 5000; i++) {
        if (qtest_readl(c->qs->qts, addr) == want) {
            return true;
        }
        g_usleep(1000);
    }
    return false;
}

static void test_rx_roundtrip(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100], got[100];
    uint32_t d0, fcs;

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    g_assert_cmpint(rd(&c, RX_HEAD(0)), ==, 1);

    d0 = qtest_readl(c.qs->qts, r.rx_ring);
    g_assert_cmphex(d0 & RX_OWN, ==, 0);
    g_assert_cmphex(d0 & (RX_FS | RX_LS), ==, RX_FS | RX_LS);
    g_assert_cmpint((d0 >> 16) & 0x3FFF, ==, sizeof(f) + 4);   /* + FCS */
    g_assert_cmpint(d0 & 0x3FFF, ==, 1536);                   /* buf len */
    /* buffer address words are left alone except data1 (status) */
    g_assert_cmphex(qtest_readl(c.qs->qts, r.rx_ring + 8), ==,
                    r.rx_buf[0] >> 32);
    qtest_memread(c.qs->qts, r.rx_buf[0], got, sizeof(f));
    g_assert_cmpmem(got, sizeof(f), f, sizeof(f));
    fcs = qtest_readl(c.qs->qts, r.rx_buf[0] + sizeof(f));
    g_assert_cmphex(fcs, ==, eth_crc32(f, sizeof(f)));
    /* next descriptor untouched */
    g_assert_cmphex(qtest_readl(c.qs->qts, r.rx_ring + 16), ==, RX_OWN | 1536);
    /* DMAC status raised */
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 16), ==, 1u << 16);
    ctx_fini(&c);
}

static void test_tx_roundtrip(void)
{
    Ctx c;
    QTestState *q;
    uint64_t ring, hwb, buf;
    uint8_t f[80], got[128];
    uint32_t be;
    ssize_t n;

    ctx_init(&c, false);
    q = c.qs->qts;
    ring = guest_alloc(&c.qs->alloc, RING * 16);
    hwb = guest_alloc(&c.qs->alloc, 4);
    buf = guest_alloc(&c.qs->alloc, 2048);
    make_frame(f, sizeof(f));
    qtest_memwrite(q, buf, f, sizeof(f));
    qtest_writel(q, hwb, 0xdead);

    wr(&c, FCT_TX_CTL, 1u << 28);
    wr(&c, DMAC_CMD, 1u << 24);                 /* TX_SWR(0) */
    wr(&c, TX_BASE_ADDRH(0), ring >> 32);
    wr(&c, TX_BASE_ADDRL(0), ring & 0xFFFFFFFF);
    wr(&c, TX_CFG_B(0), RING);
    wr(&c, TX_CFG_A(0), 1u << 5);
    wr(&c, TX_HWB_ADDRH(0), hwb >> 32);
    wr(&c, TX_HWB_ADDRL(0), hwb & 0xFFFFFFFF);
    wr(&c, TX_TAIL(0), 0);
    wr(&c, DMAC_INT_EN_SET, 1);
    wr(&c, DMAC_CMD, 1u << 20);                 /* START_T(0) */
    wr(&c, MAC_TX, 1);

    /* one data descriptor: FS|LS|IOC|FCS, length */
    qtest_writel(q, ring + 4, buf & 0xFFFFFFFF);
    qtest_writel(q, ring + 8, buf >> 32);
    qtest_writel(q, ring + 12, sizeof(f) << 16);
    qtest_writel(q, ring + 0, (1u << 29) | (1u << 28) | (1u << 26) |
                 (1u << 17) | sizeof(f));
    wr(&c, TX_TAIL(0), 1);

    g_assert_true(wait_hwb(&c, hwb, 1));
    g_assert_cmpint(rd(&c, TX_HEAD(0)), ==, 1);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & 1, ==, 1);    /* IOC */
    /* the model must not write driver-owned TX descriptor words */
    g_assert_cmphex(qtest_readl(q, ring), ==, (1u << 29) | (1u << 28) |
                    (1u << 26) | (1u << 17) | sizeof(f));

    n = recv(c.sock[0], &be, 4, MSG_WAITALL);
    g_assert_cmpint(n, ==, 4);
    g_assert_cmpint(ntohl(be), ==, sizeof(f));
    n = recv(c.sock[0], got, sizeof(f), MSG_WAITALL);
    g_assert_cmpint(n, ==, sizeof(f));
    g_assert_cmpmem(got, sizeof(f), f, sizeof(f));
    ctx_fini(&c);
}

/*
 * PCI11x1x: a frame on TX channel 3 (the driver's 4th queue) goes out,
 * channel 3's head is written back, DMAC_INT_STS TX_IOC(3) and INT_STS
 * DMA_TX3 (bit 19) are set and the MSI-X message goes to the vector
 * INT_VEC_MAP1 nibble 3 names (12: above the LAN743x's 8). Channels 0..2
 * stay idle. On the lan7430 the same writes send nothing (one channel).
 */
static void tx_ch3(Ctx *c, uint64_t ring, uint64_t hwb, uint64_t buf,
                   size_t len)
{
    QTestState *q = c->qs->qts;

    qtest_writel(q, hwb, 0xdead);
    wr(c, FCT_TX_CTL, 1u << 31);                /* EN(3) */
    wr(c, DMAC_CMD, 1u << 27);                  /* TX_SWR(3) */
    qtest_clock_step(q, 10 * 1000);
    wr(c, TX_BASE_ADDRH(3), ring >> 32);
    wr(c, TX_BASE_ADDRL(3), ring & 0xFFFFFFFF);
    wr(c, TX_CFG_B(3), RING);
    wr(c, TX_CFG_A(3), 1u << 5);
    wr(c, TX_HWB_ADDRH(3), hwb >> 32);
    wr(c, TX_HWB_ADDRL(3), hwb & 0xFFFFFFFF);
    wr(c, DMAC_INT_EN_SET, 1u << 3);            /* TX_IOC(3) */
    wr(c, INT_VEC_MAP1, 0xC000);                /* TX3 -> vector 12 */
    wr(c, INT_VEC_EN_SET, 1u << 12);
    wr(c, INT_EN_SET, INT_BIT_MAS | (1u << 19));
    wr(c, DMAC_CMD, 1u << 23);                  /* START_T(3) */
    wr(c, MAC_TX, 1);
    qtest_writel(q, ring + 4, buf & 0xFFFFFFFF);
    qtest_writel(q, ring + 8, buf >> 32);
    qtest_writel(q, ring + 12, 0);
    qtest_writel(q, ring + 0, (1u << 29) | (1u << 28) | (1u << 26) |
                 (1u << 17) | len);
    wr(c, TX_TAIL(3), 1);
}

static void test_pci11x1x_tx_ch3(void)
{
    Ctx c;
    QTestState *q;
    uint64_t ring, hwb, buf;
    uint8_t f[90], got[128];
    uint32_t be;

    ctx_init_dev(&c, true, "pci11010");
    q = c.qs->qts;
    ring = guest_alloc(&c.qs->alloc, RING * 16);
    hwb = guest_alloc(&c.qs->alloc, 4);
    buf = guest_alloc(&c.qs->alloc, 2048);
    make_frame(f, sizeof(f));
    qtest_memwrite(q, buf, f, sizeof(f));
    tx_ch3(&c, ring, hwb, buf, sizeof(f));

    g_assert_true(wait_hwb(&c, hwb, 1));
    g_assert_cmpint(rd(&c, TX_HEAD(3)), ==, 1);
    g_assert_cmpint(rd(&c, TX_HEAD(0)), ==, 0);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & 0xF, ==, 1u << 3);
    g_assert_cmphex(rd(&c, INT_STS) & (0xFu << 16), ==, 1u << 19);
    g_assert_cmphex(msix_seen(&c, 12), ==, 0x100 + 12);
    g_assert_cmphex(msix_seen(&c, 1), ==, 0);
    g_assert_cmpint(recv(c.sock[0], &be, 4, MSG_WAITALL), ==, 4);
    g_assert_cmpint(ntohl(be), ==, sizeof(f));
    g_assert_cmpint(recv(c.sock[0], got, sizeof(f), MSG_WAITALL), ==,
                    sizeof(f));
    g_assert_cmpmem(got, sizeof(f), f, sizeof(f));
    ctx_fini(&c);

    /* the LAN7430 has one TX channel: channel 3's registers are inert */
    ctx_init_dev(&c, false, "lan7430");
    q = c.qs->qts;
    ring = guest_alloc(&c.qs->alloc, RING * 16);
    hwb = guest_alloc(&c.qs->alloc, 4);
    buf = guest_alloc(&c.qs->alloc, 2048);
    qtest_memwrite(q, buf, f, sizeof(f));
    tx_ch3(&c, ring, hwb, buf, sizeof(f));
    g_assert_false(wait_hwb(&c, hwb, 1));
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & 0xF, ==, 0);
    ctx_fini(&c);
}

/*
 * RX0 on vector 2 with the production auto-clear configuration the driver
 * uses: the message fires once, enables are auto-cleared, a second frame
 * does not fire, and re-enabling through RX_TAIL re-fires the pending one.
 */
static void test_irq_auto_clear(void)
{
    Ctx c;
    Rings r;
    uint8_t f[64];
    int i;

    ctx_init(&c, true);
    wr(&c, INT_VEC_MAP0, 2);                    /* RX0 -> vector 2 */
    wr(&c, INT_VEC_EN_AUTO_CLR, 1u << 2);
    wr(&c, INT_VEC_EN_SET, 1u << 2);
    wr(&c, INT_EN_SET, INT_BIT_MAS | INT_BIT_RX0);
    /* TOP_INT_EN_AUTO_CLR | DMA_INT_STS_AUTO_CLR */
    setup_rx(&c, &r, (1u << 6) | (1u << 3));

    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    g_assert_cmphex(msix_seen(&c, 2), ==, 0x102);
    g_assert_cmphex(msix_seen(&c, 0), ==, 0);
    /* auto-cleared: source enable, vector enable, DMAC status */
    g_assert_cmphex(rd(&c, INT_EN_SET) & INT_BIT_RX0, ==, 0);
    g_assert_cmphex(rd(&c, INT_VEC_EN_SET) & (1u << 2), ==, 0);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 16), ==, 0);

    /* second frame: status set again, but no message */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 16), ==, 1u << 16);
    for (i = 0; i < 20; i++) {
        g_usleep(1000);
        g_assert_cmphex(msix_seen(&c, 2), ==, 0);
    }
    /* driver re-arms through the tail register flags: pending re-fires */
    wr(&c, RX_TAIL(0), (1u << 30) | (1u << 29) | 1);
    g_assert_cmphex(msix_seen(&c, 2), ==, 0x102);
    ctx_fini(&c);
}

/* software interrupt routed through INT_VEC_MAP2 to vector 3, TX to 1 */
static void test_msix_vector_map(void)
{
    Ctx c;
    int v;

    ctx_init(&c, true);
    wr(&c, INT_VEC_MAP2, 3u << 12);             /* SW_GP nibble 15:12 */
    wr(&c, INT_VEC_MAP1, 1);
    wr(&c, INT_VEC_EN_SET, 0xFF);
    wr(&c, INT_EN_SET, INT_BIT_MAS | INT_BIT_SW_GP);
    wr(&c, INT_SET, INT_BIT_SW_GP);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0x103);
    for (v = 0; v < 8; v++) {
        g_assert_cmphex(msix_seen(&c, v), ==, 0);
    }
    g_assert_cmphex(rd(&c, INT_STS) & (INT_BIT_SW_GP | INT_BIT_MAS), ==,
                    INT_BIT_SW_GP | INT_BIT_MAS);
    /* W1C clears status; re-raising with the vector disabled stays quiet
     * until the vector is enabled again */
    wr(&c, INT_STS, INT_BIT_SW_GP);
    g_assert_cmphex(rd(&c, INT_STS) & INT_BIT_SW_GP, ==, 0);
    wr(&c, INT_VEC_EN_CLR, 1u << 3);
    wr(&c, INT_SET, INT_BIT_SW_GP);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0);
    wr(&c, INT_VEC_EN_SET, 1u << 3);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0x103);

    /* remap to vector 5 */
    wr(&c, INT_STS, INT_BIT_SW_GP);
    wr(&c, INT_VEC_MAP2, 5u << 12);
    wr(&c, INT_SET, INT_BIT_SW_GP);
    g_assert_cmphex(msix_seen(&c, 5), ==, 0x105);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0);
    ctx_fini(&c);
}

/* a 1200-byte frame into 512-byte buffers spans three descriptors */
static void test_rx_multibuf(void)
{
    Ctx c;
    Rings r;
    uint8_t f[1200], got[1204];
    uint32_t d[3];
    int i;

    ctx_init(&c, false);
    setup_rx_len(&c, &r, 0, 512);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 3));
    for (i = 0; i < 3; i++) {
        d[i] = qtest_readl(c.qs->qts, r.rx_ring + 16 * i);
        g_assert_cmphex(d[i] & RX_OWN, ==, 0);
        qtest_memread(c.qs->qts, r.rx_buf[i], got + 512 * i,
                      MIN(512, sizeof(got) - 512 * i));
    }
    g_assert_cmphex(d[0] & (RX_FS | RX_LS), ==, RX_FS);
    g_assert_cmphex(d[1] & (RX_FS | RX_LS), ==, 0);
    g_assert_cmphex(d[2] & (RX_FS | RX_LS), ==, RX_LS);
    g_assert_cmpint((d[2] >> 16) & 0x3FFF, ==, sizeof(f) + 4);
    g_assert_cmpmem(got, sizeof(f), f, sizeof(f));
    g_assert_cmphex(ldl_le_p(got + sizeof(f)), ==, eth_crc32(f, sizeof(f)));
    g_assert_cmphex(qtest_readl(c.qs->qts, r.rx_ring + 48), ==, RX_OWN | 512);
    ctx_fini(&c);
}

static uint16_t csum16(const uint8_t *p, size_t len, uint32_t sum)
{
    size_t i;

    for (i = 0; i + 1 < len; i += 2) {
        sum += (p[i] << 8) | p[i + 1];
    }
    if (len & 1) {
        sum += p[len - 1] << 8;
    }
    while (sum >> 16) {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    return ~sum & 0xFFFF;
}

static int64_t cnt(Ctx *c, const char *key);

/* TSO: one 3000-byte payload with MSS 1000 -> 3 wire frames */
static void test_tx_tso(void)
{
    Ctx c;
    QTestState *q;
    uint64_t ring, hwb, buf;
    enum { HDR = 54, PAY = 3000, MSS = 1000 };
    uint8_t f[HDR + PAY], got[HDR + MSS];
    int seg;

    ctx_init(&c, false);
    q = c.qs->qts;
    ring = guest_alloc(&c.qs->alloc, RING * 16);
    hwb = guest_alloc(&c.qs->alloc, 4);
    buf = guest_alloc(&c.qs->alloc, sizeof(f));
    make_frame(f, sizeof(f));
    f[12] = 0x08; f[13] = 0x00;
    memset(f + 14, 0, 40);
    f[14] = 0x45;
    stw_be_p(f + 16, 40 + PAY);             /* as the stack leaves it */
    stw_be_p(f + 18, 0x1234);               /* IP id */
    f[22] = 64; f[23] = 6;
    memcpy(f + 26, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
    stw_be_p(f + 34, 40000); stw_be_p(f + 36, 5201);
    stl_be_p(f + 38, 0x10000000);           /* seq */
    f[46] = 5 << 4;
    f[47] = 0x18 | 0x01;                    /* PSH|ACK|FIN */
    qtest_memwrite(q, buf, f, sizeof(f));

    wr(&c, FCT_TX_CTL, 1u << 28);
    wr(&c, DMAC_CMD, 1u << 24);
    wr(&c, TX_BASE_ADDRH(0), ring >> 32);
    wr(&c, TX_BASE_ADDRL(0), ring & 0xFFFFFFFF);
    wr(&c, TX_CFG_B(0), RING);
    wr(&c, TX_CFG_A(0), 1u << 5);
    wr(&c, TX_HWB_ADDRH(0), hwb >> 32);
    wr(&c, TX_HWB_ADDRL(0), hwb & 0xFFFFFFFF);
    wr(&c, DMAC_CMD, 1u << 20);
    wr(&c, MAC_TX, 1);
    /* data: FS|LS|EXT|IOC|ICE|IPE|TPE|FCS, MSS in data3; ext: LSO|len */
    qtest_writel(q, ring + 4, buf & 0xFFFFFFFF);
    qtest_writel(q, ring + 8, buf >> 32);
    qtest_writel(q, ring + 12, MSS << 16);
    qtest_writel(q, ring + 0, (1u << 29) | (1u << 28) | (1u << 27) |
                 (1u << 26) | (7u << 20) | (1u << 17) | sizeof(f));
    qtest_writel(q, ring + 16 + 0, 0x40000000 | (1u << 21) | sizeof(f));
    qtest_writel(q, ring + 16 + 4, 0);
    qtest_writel(q, ring + 16 + 8, 0);
    qtest_writel(q, ring + 16 + 12, 0);
    wr(&c, TX_TAIL(0), 2);
    g_assert_true(wait_hwb(&c, hwb, 2));

    for (seg = 0; seg < PAY / MSS; seg++) {
        uint32_t be, sum;
        uint8_t ph[12];

        g_assert_cmpint(recv(c.sock[0], &be, 4, MSG_WAITALL), ==, 4);
        g_assert_cmpint(ntohl(be), ==, HDR + MSS);
        g_assert_cmpint(recv(c.sock[0], got, HDR + MSS, MSG_WAITALL), ==,
                        HDR + MSS);
        g_assert_cmpint(lduw_be_p(got + 16), ==, 40 + MSS);
        g_assert_cmphex(lduw_be_p(got + 18), ==, 0x1234 + seg);
        g_assert_cmphex(csum16(got + 14, 20, 0), ==, 0);
        g_assert_cmphex(ldl_be_p(got + 38), ==, 0x10000000 + seg * MSS);
        g_assert_cmphex(got[47] & 0x09, ==, seg == 2 ? 0x09 : 0);
        memcpy(ph, got + 26, 8);
        ph[8] = 0; ph[9] = 6;
        stw_be_p(ph + 10, 20 + MSS);
        sum = 0xFFFF & ~csum16(ph, 12, 0);
        g_assert_cmphex(csum16(got + 34, 20 + MSS, sum), ==, 0);
        g_assert_cmpmem(got + HDR, MSS, f + HDR + seg * MSS, MSS);
    }
    g_assert_cmpint(cnt(&c, "tx_tso_frames"), ==, 1);
    g_assert_cmpint(cnt(&c, "tx_tso_segments"), ==, 3);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 3);
    g_assert_cmpint(cnt(&c, "tx_bytes"), ==, 3 * (HDR + MSS));
    ctx_fini(&c);
}

/* ---- QMP: counters and runtime properties ---- */

#define DUT_PATH "/machine/peripheral/dut"

static QDict *counters(Ctx *c)
{
    QDict *rsp = qtest_qmp(c->qs->qts, "{'execute': 'qom-get', 'arguments':"
                           " {'path': %s, 'property': 'counters'}}", DUT_PATH);
    QObject *o;
    QDict *d;

    g_assert(qdict_haskey(rsp, "return"));
    o = qobject_from_json(qdict_get_str(rsp, "return"), &error_abort);
    qobject_unref(rsp);
    d = qobject_to(QDict, o);
    g_assert(d);
    return d;
}

/* a counter's value; -1 when the model has no such counter */
static int64_t cnt(Ctx *c, const char *key)
{
    QDict *d = counters(c);
    int64_t v = qdict_get_try_int(d, key, -1);

    qobject_unref(d);
    return v;
}

static int64_t cnt_sub(Ctx *c, const char *obj, const char *key)
{
    QDict *d = counters(c);
    QDict *o = qdict_get_qdict(d, obj);
    int64_t v = o ? qdict_get_try_int(o, key, -1) : -1;

    qobject_unref(d);
    return v;
}

/* element idx of list l (NULL past its end, or if l is NULL) */
static QObject *list_at(QList *l, int idx)
{
    QListEntry *e;
    int i = 0;

    if (l) {
        QLIST_FOREACH_ENTRY(l, e) {
            if (i++ == idx) {
                return qlist_entry_obj(e);
            }
        }
    }
    return NULL;
}

/* the integer o, -1 if there is none */
static int64_t obj_int(QObject *o)
{
    QNum *n = qobject_to(QNum, o);

    return n ? qnum_get_int(n) : -1;
}

static int64_t cnt_arr(Ctx *c, const char *key, int idx)
{
    QDict *d = counters(c);
    int64_t v = obj_int(list_at(qdict_get_qlist(d, key), idx));

    qobject_unref(d);
    return v;
}

/* element j of element i of a list of lists */
static int64_t cnt_arr2(Ctx *c, const char *key, int i, int j)
{
    QDict *d = counters(c);
    QList *l = qobject_to(QList, list_at(qdict_get_qlist(d, key), i));
    int64_t v = obj_int(list_at(l, j));

    qobject_unref(d);
    return v;
}

/* the histogram bin whose range holds us microseconds */
static int wb_delay_bin(Ctx *c, int64_t us)
{
    QDict *d = counters(c);
    QList *lower = qdict_get_qlist(d, "wb_delay_bin_lower_us");
    int b = 0;

    while (obj_int(list_at(lower, b + 1)) >= 0 &&
           obj_int(list_at(lower, b + 1)) <= us) {
        b++;
    }
    qobject_unref(d);
    return b;
}

static int64_t cnt_mmio(Ctx *c, const char *reg, const char *rw)
{
    QDict *d = counters(c);
    int64_t v = qdict_get_int(qdict_get_qdict(qdict_get_qdict(d, "mmio"), reg),
                              rw);

    qobject_unref(d);
    return v;
}

static int64_t fired(Ctx *c, const char *fault)
{
    return cnt_sub(c, "fault_fired", fault);
}

static void prop_set(Ctx *c, const char *prop, uint32_t val)
{
    QDict *rsp = qtest_qmp(c->qs->qts, "{'execute': 'qom-set', 'arguments':"
                           " {'path': %s, 'property': %s, 'value': %u}}",
                           DUT_PATH, prop, val);
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
}

static int64_t prop_get(Ctx *c, const char *prop)
{
    QDict *rsp = qtest_qmp(c->qs->qts, "{'execute': 'qom-get', 'arguments':"
                           " {'path': %s, 'property': %s}}", DUT_PATH, prop);
    int64_t v = qdict_get_try_int(rsp, "return", -1);   /* -1: no such */

    qobject_unref(rsp);
    return v;
}

static void prop_set_true(Ctx *c, const char *prop)
{
    QDict *rsp = qtest_qmp(c->qs->qts, "{'execute': 'qom-set', 'arguments':"
                           " {'path': %s, 'property': %s, 'value': true}}",
                           DUT_PATH, prop);
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
}

/* wait (real time) until counter key reaches want */
static bool wait_cnt(Ctx *c, const char *key, int64_t want)
{
    int i;

    for (i = 0; i < 2000; i++) {
        if (cnt(c, key) >= want) {
            return true;
        }
        g_usleep(1000);
    }
    return false;
}

/* wait until (readl(addr) & mask) == want */
static bool wait_mem(Ctx *c, uint64_t addr, uint32_t mask, uint32_t want)
{
    int i;

    for (i = 0; i < 5000; i++) {
        if ((qtest_readl(c->qs->qts, addr) & mask) == want) {
            return true;
        }
        g_usleep(1000);
    }
    return false;
}

static void make_frame_to(uint8_t *f, size_t len, const uint8_t *dst)
{
    make_frame(f, len);
    memcpy(f, dst, 6);
}

/* RX counters, drop counters, MMIO and INTx counters, reset-counters */
static void test_counters_rx(void)
{
    static const uint8_t other[6] = { 0x52, 0x54, 0x00, 0x99, 0x99, 0x99 };
    Ctx c;
    Rings r;
    uint8_t f[1600];

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    wr(&c, INT_EN_SET, INT_BIT_MAS | INT_BIT_RX0);
    prop_set_true(&c, "reset-counters");
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    g_assert_cmpint(cnt_mmio(&c, "RX_TAIL0", "w"), ==, 0);
    g_assert_cmpint(cnt(&c, "rate_mbps"), ==, 1000);

    make_frame(f, 100);
    send_frame(&c, f, 100);
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 1);
    g_assert_cmpint(cnt(&c, "rx_bytes"), ==, 100);
    g_assert_cmpint(cnt_arr(&c, "rx_desc_consumed", 0), ==, 1);
    g_assert_cmpint(cnt_arr(&c, "rx_desc_written", 0), ==, 1);
    g_assert_cmpint(cnt_arr(&c, "rx_head_writebacks", 0), ==, 1);
    g_assert_cmpint(cnt_arr(&c, "rx_frames_per_channel", 0), ==, 1);
    g_assert_cmpint(cnt_arr(&c, "rx_frames_per_channel", 1), ==, 0);
    g_assert_cmpint(cnt(&c, "dma_data_write_bytes"), ==, 104);   /* + FCS */
    /* data1 + data0 + head */
    g_assert_cmpint(cnt(&c, "dma_desc_write_bytes"), ==, 12);
    /* OWN probe (4) + full descriptor (16) */
    g_assert_cmpint(cnt(&c, "dma_desc_read_bytes"), ==, 20);
    g_assert_cmpint(cnt(&c, "rx_csum_unchecked"), ==, 1);
    /* INTx: one assertion, counted on vector 0 */
    g_assert_cmpint(cnt(&c, "irq_intx_assert"), ==, 1);
    g_assert_cmpint(cnt_arr(&c, "irq_per_vector", 0), ==, 1);

    /* MMIO per register */
    rd(&c, INT_STS);
    rd(&c, INT_STS);
    wr(&c, INT_STS, INT_BIT_RX0);
    g_assert_cmpint(cnt_mmio(&c, "INT_STS", "r"), ==, 2);
    g_assert_cmpint(cnt_mmio(&c, "INT_STS", "w"), ==, 1);
    wr(&c, INT_EN_CLR, INT_BIT_RX0);
    g_assert_cmpint(cnt_mmio(&c, "INT_EN_CLR", "w"), ==, 1);
    g_assert_cmpint(cnt_mmio(&c, "INT_EN_SET", "w"), ==, 0);

    /* filter drop: unicast to somebody else */
    make_frame_to(f, 100, other);
    send_frame(&c, f, 100);
    g_assert_true(wait_cnt(&c, "rx_drop_filter", 1));
    /* size drop: 1600 bytes > MAC_RX max 1518 with FSE */
    make_frame(f, 1600);
    send_frame(&c, f, 1600);
    g_assert_true(wait_cnt(&c, "rx_drop_size", 1));

    /* ring empty (tail == head): the frame waits, tail write delivers */
    wr(&c, RX_TAIL(0), 1);
    g_assert_cmpint(cnt_mmio(&c, "RX_TAIL0", "w"), ==, 1);
    make_frame(f, 100);
    send_frame(&c, f, 100);
    g_assert_true(wait_cnt(&c, "rx_no_desc_stalls", 1));
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 1);
    wr(&c, RX_TAIL(0), RING - 1);
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 2);

    /* receiver off: dropped */
    wr(&c, MAC_RX, rd(&c, MAC_RX) & ~1u);
    send_frame(&c, f, 100);
    g_assert_true(wait_cnt(&c, "rx_drop_disabled", 1));
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 2);

    prop_set_true(&c, "reset-counters");
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    g_assert_cmpint(cnt(&c, "rx_drop_filter"), ==, 0);
    g_assert_cmpint(cnt_mmio(&c, "INT_STS", "r"), ==, 0);
    ctx_fini(&c);
}

/* a frame that needs more descriptors than the ring can ever offer */
static void test_counters_rx_no_desc(void)
{
    Ctx c;
    Rings r;
    uint8_t f[400];

    ctx_init(&c, false);
    setup_rx_len(&c, &r, 0, 64);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_drop_no_desc", 1));
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    ctx_fini(&c);
}

/*
 * DMA channel stopped with its FIFO enabled: the frame waits (the FIFO),
 * the channel's start delivers it; with the FIFO disabled it is dropped.
 */
static void test_rx_fifo_hold(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    make_frame(f, sizeof(f));

    wr(&c, DMAC_CMD, 1u << 0);                  /* STOP_R(0) */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_fifo_holds", 1));
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    g_assert_cmpint(cnt(&c, "rx_drop_disabled"), ==, 0);
    wr(&c, DMAC_CMD, 1u << 4);                  /* START_R(0) */
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 1);

    /* FIFO held a frame, then is disabled: the frame is dropped */
    wr(&c, DMAC_CMD, 1u << 0);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_fifo_holds", 2));
    wr(&c, FCT_RX_CTL, 1u << 24);               /* DIS(0) */
    g_assert_true(wait_cnt(&c, "rx_drop_disabled", 1));
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 1);
    ctx_fini(&c);
}

static void build_ipv4_udp(uint8_t *f, size_t len, bool good_ipcsum)
{
    make_frame(f, len);
    f[12] = 0x08;
    f[13] = 0x00;
    memset(f + 14, 0, 28);
    f[14] = 0x45;
    stw_be_p(f + 16, len - 14);
    f[22] = 64;
    f[23] = 17;
    memcpy(f + 26, "\x0a\x00\x00\x02\x0a\x00\x00\x01", 8);
    stw_be_p(f + 24, good_ipcsum ? csum16(f + 14, 20, 0) : 0x1234);
    stw_be_p(f + 34, 1000);
    stw_be_p(f + 36, 2000);
    stw_be_p(f + 38, len - 34);
    stw_be_p(f + 40, 0);            /* no UDP checksum */
}

static void test_counters_rx_csum(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    wr(&c, RFE_CTL, rd(&c, RFE_CTL) | (1u << 11) | (1u << 12));
    build_ipv4_udp(f, sizeof(f), true);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    g_assert_cmpint(cnt(&c, "rx_csum_verified"), ==, 1);
    build_ipv4_udp(f, sizeof(f), false);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    g_assert_cmpint(cnt(&c, "rx_csum_errors"), ==, 1);
    g_assert_cmphex(qtest_readl(c.qs->qts, r.rx_ring + 16 + 4) & (1u << 17),
                    ==, 1u << 17);                              /* ICE */
    ctx_fini(&c);
}

/* TX helper: ring of RING descriptors, frames of len bytes */
typedef struct TxRing {
    uint64_t ring, hwb, buf;
} TxRing;

static void setup_tx(Ctx *c, TxRing *t)
{
    t->ring = guest_alloc(&c->qs->alloc, RING * 16);
    t->hwb = guest_alloc(&c->qs->alloc, 4);
    t->buf = guest_alloc(&c->qs->alloc, 2048);
    qtest_writel(c->qs->qts, t->hwb, 0xdead);
    wr(c, FCT_TX_CTL, 1u << 28);
    wr(c, DMAC_CMD, 1u << 24);
    wr(c, TX_BASE_ADDRH(0), t->ring >> 32);
    wr(c, TX_BASE_ADDRL(0), t->ring & 0xFFFFFFFF);
    wr(c, TX_CFG_B(0), RING);
    wr(c, TX_CFG_A(0), 1u << 5);
    wr(c, TX_HWB_ADDRH(0), t->hwb >> 32);
    wr(c, TX_HWB_ADDRL(0), t->hwb & 0xFFFFFFFF);
    wr(c, DMAC_INT_EN_SET, 1);
    wr(c, DMAC_CMD, 1u << 20);
    wr(c, MAC_TX, 1);
}

/* descriptor i: one buffer holding a whole frame of len bytes */
static void tx_desc(Ctx *c, TxRing *t, int i, uint32_t len, uint32_t flags)
{
    QTestState *q = c->qs->qts;
    uint8_t f[2048];

    make_frame(f, len);
    qtest_memwrite(q, t->buf, f, len);
    qtest_writel(q, t->ring + 16 * i + 4, t->buf & 0xFFFFFFFF);
    qtest_writel(q, t->ring + 16 * i + 8, t->buf >> 32);
    qtest_writel(q, t->ring + 16 * i + 12, 0);
    qtest_writel(q, t->ring + 16 * i + 0, (1u << 29) | (1u << 28) |
                 (1u << 17) | flags | len);
}

static void drain_sock(Ctx *c, int n)
{
    uint8_t got[2048];
    uint32_t be;

    while (n-- > 0) {
        g_assert_cmpint(recv(c->sock[0], &be, 4, MSG_WAITALL), ==, 4);
        g_assert_cmpint(recv(c->sock[0], got, ntohl(be), MSG_WAITALL), ==,
                        ntohl(be));
    }
}

static void test_counters_tx(void)
{
    Ctx c;
    TxRing t;

    ctx_init(&c, false);
    /*
     * an empty frame is a descriptor error with desc-check (desc-tx-seq);
     * without it the DMA skips it and counts it as bad
     */
    prop_set(&c, "desc-check", 0);
    setup_tx(&c, &t);
    prop_set_true(&c, "reset-counters");
    tx_desc(&c, &t, 0, 100, (1u << 26) | (1u << 20));   /* IOC, TPE */
    tx_desc(&c, &t, 1, 0, 0);                           /* empty frame */
    wr(&c, TX_TAIL(0), 2);
    g_assert_true(wait_hwb(&c, t.hwb, 2));
    drain_sock(&c, 1);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 1);
    g_assert_cmpint(cnt(&c, "tx_bytes"), ==, 100);
    g_assert_cmpint(cnt(&c, "tx_desc_consumed"), ==, 2);
    g_assert_cmpint(cnt(&c, "tx_head_writebacks"), ==, 1);
    g_assert_cmpint(cnt(&c, "tx_csum_offload"), ==, 1);
    g_assert_cmpint(cnt(&c, "tx_bad_frames"), ==, 1);
    g_assert_cmpint(cnt(&c, "dma_data_read_bytes"), ==, 100);
    g_assert_cmpint(cnt(&c, "dma_desc_read_bytes"), ==, 32);
    g_assert_cmpint(cnt(&c, "dma_desc_write_bytes"), ==, 4);
    g_assert_cmpint(cnt_mmio(&c, "TX_TAIL0", "w"), ==, 1);
    ctx_fini(&c);
}

/* stat-preset: every statistics counter takes the value, then wraps */
static void test_stat_preset(void)
{
    Ctx c;
    TxRing t;

    ctx_init(&c, false);
    setup_tx(&c, &t);
    prop_set(&c, "stat-preset", 0xFFFFFFFFu);
    g_assert_cmpint(prop_get(&c, "stat-preset"), ==, 0xFFFFFFFFu);
    g_assert_cmphex(rd(&c, STAT_RX_DROPPED), ==, 0xFFFFFFFFu);
    g_assert_cmphex(rd(&c, STAT_TX_TOTAL), ==, 0xFFFFFFFFu);
    tx_desc(&c, &t, 0, 100, (1u << 26) | (1u << 20));   /* IOC, TPE */
    wr(&c, TX_TAIL(0), 1);
    g_assert_true(wait_hwb(&c, t.hwb, 1));
    drain_sock(&c, 1);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 1);
    /* one frame: the 32-bit counter wrapped to 0, the others kept */
    g_assert_cmphex(rd(&c, STAT_TX_TOTAL), ==, 0);
    g_assert_cmphex(rd(&c, STAT_RX_DROPPED), ==, 0xFFFFFFFFu);
    ctx_fini(&c);
}

/* ---- fault knobs ---- */

static uint32_t rx_d0(Ctx *c, Rings *r, int i)
{
    return qtest_readl(c->qs->qts, r->rx_ring + 16 * i);
}

static void test_fault_rx_len(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    make_frame(f, sizeof(f));

    prop_set(&c, "fault-rx-len-short", 1);
    g_assert_cmpint(prop_get(&c, "fault-rx-len-short"), ==, 1);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    g_assert_cmpint((rx_d0(&c, &r, 0) >> 16) & 0x3FFF, ==, 104 / 2);
    g_assert_cmpint(fired(&c, "rx-len-short"), ==, 1);
    g_assert_cmpint(prop_get(&c, "fault-rx-len-short"), ==, 0);

    prop_set(&c, "fault-rx-len-long-every", 1);
    send_frame(&c, f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 3));
    g_assert_cmpint((rx_d0(&c, &r, 1) >> 16) & 0x3FFF, ==, 1536 + 1024);
    g_assert_cmpint((rx_d0(&c, &r, 2) >> 16) & 0x3FFF, ==, 1536 + 1024);
    g_assert_cmpint(fired(&c, "rx-len-long"), ==, 2);
    prop_set(&c, "fault-rx-len-long-every", 0);

    prop_set(&c, "fault-rx-len-zero", 1);
    send_frame(&c, f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 5));
    g_assert_cmphex(rx_d0(&c, &r, 3) & 0x3FFF0000, ==, 0);
    g_assert_cmphex(rx_d0(&c, &r, 3) & (RX_FS | RX_LS), ==, RX_FS | RX_LS);
    g_assert_cmpint((rx_d0(&c, &r, 4) >> 16) & 0x3FFF, ==, 104);
    g_assert_cmpint(fired(&c, "rx-len-zero"), ==, 1);
    ctx_fini(&c);
}

static void test_fault_drop_fs_ls(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    make_frame(f, sizeof(f));
    prop_set(&c, "fault-drop-fs", 1);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    g_assert_cmphex(rx_d0(&c, &r, 0) & (RX_FS | RX_LS | RX_OWN), ==, RX_LS);
    prop_set(&c, "fault-drop-ls-every", 2);
    send_frame(&c, f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 3));
    g_assert_cmphex(rx_d0(&c, &r, 1) & (RX_FS | RX_LS), ==, RX_FS | RX_LS);
    g_assert_cmphex(rx_d0(&c, &r, 2) & (RX_FS | RX_LS), ==, RX_FS);
    g_assert_cmpint(fired(&c, "drop-fs"), ==, 1);
    g_assert_cmpint(fired(&c, "drop-ls"), ==, 1);
    ctx_fini(&c);
}

static void test_fault_ext_missing(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    make_frame(f, sizeof(f));

    /* no timestamp wanted: EXT set anyway, nothing written after it */
    prop_set(&c, "fault-ext-missing", 1);
    send_frame(&c, f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    g_assert_cmphex(rx_d0(&c, &r, 0) & (RX_FS | RX_LS | RX_EXT | RX_OWN), ==,
                    RX_FS | RX_LS | RX_EXT);
    g_assert_cmphex(rx_d0(&c, &r, 1) & (RX_FS | RX_LS | RX_EXT | RX_OWN), ==,
                    RX_FS | RX_LS);
    g_assert_cmpint(fired(&c, "ext-missing"), ==, 1);
    g_assert_cmpint(prop_get(&c, "fault-ext-missing"), ==, 0);

    /* timestamps on: a normal frame takes an extension descriptor ... */
    wr(&c, RX_CFG_B(0), RING | RX_CFG_B_TS_ALL_RX);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 4));
    g_assert_cmphex(rx_d0(&c, &r, 2) & (RX_FS | RX_LS | RX_EXT), ==,
                    RX_FS | RX_LS | RX_EXT);
    g_assert_cmphex(rx_d0(&c, &r, 3) & (RX_FS | RX_LS | RX_EXT | RX_OWN), ==,
                    RX_EXT);
    /* ... the faulted one does not: the next frame follows at once */
    prop_set(&c, "fault-ext-missing", 1);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 5));
    wr(&c, RX_CFG_B(0), RING);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 6));
    g_assert_cmphex(rx_d0(&c, &r, 4) & (RX_FS | RX_LS | RX_EXT | RX_OWN), ==,
                    RX_FS | RX_LS | RX_EXT);
    g_assert_cmphex(rx_d0(&c, &r, 5) & (RX_FS | RX_LS | RX_EXT | RX_OWN), ==,
                    RX_FS | RX_LS);
    g_assert_cmpint(fired(&c, "ext-missing"), ==, 2);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 5);
    ctx_fini(&c);
}

static void test_fault_wb_delay(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    make_frame(f, sizeof(f));
    prop_set(&c, "fault-wb-delay-us", 500);

    /* head: descriptor written at once, head write-back + status later */
    prop_set(&c, "fault-wb-delay-head", 1);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_mem(&c, r.rx_ring, RX_OWN | RX_LS, RX_LS));
    g_assert_cmphex(qtest_readl(c.qs->qts, r.rx_hwb), ==, 0xdead);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 16), ==, 0);
    /* a second frame is held back behind it */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_fault_holds", 1));
    g_assert_cmphex(rx_d0(&c, &r, 1), ==, RX_OWN | 1536);
    qtest_clock_step(c.qs->qts, 500 * 1000);
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 16), ==, 1u << 16);
    g_assert_cmpint(fired(&c, "wb-delay-head"), ==, 1);

    /* descriptor: head written at once, descriptor still owned by HW */
    wr(&c, DMAC_INT_STS, 1u << 16);
    prop_set(&c, "fault-wb-delay-desc", 1);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 3));
    g_assert_cmphex(rx_d0(&c, &r, 2), ==, RX_OWN | 1536);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 16), ==, 1u << 16);
    qtest_clock_step(c.qs->qts, 500 * 1000);
    g_assert_cmphex(rx_d0(&c, &r, 2) & (RX_OWN | RX_FS | RX_LS), ==,
                    RX_FS | RX_LS);
    g_assert_cmpint((rx_d0(&c, &r, 2) >> 16) & 0x3FFF, ==, 104);
    g_assert_cmpint(fired(&c, "wb-delay-desc"), ==, 1);
    ctx_fini(&c);
}

static void test_fault_rx_stall(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    make_frame(f, sizeof(f));
    prop_set(&c, "fault-rx-stall-ms", 10);
    prop_set(&c, "fault-rx-stall", 1);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));   /* stall starts after it */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_fault_holds", 1));
    g_usleep(20 * 1000);
    g_assert_cmphex(qtest_readl(c.qs->qts, r.rx_hwb), ==, 1);
    qtest_clock_step(c.qs->qts, 10 * 1000 * 1000);
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    g_assert_cmpint(fired(&c, "rx-stall"), ==, 1);
    ctx_fini(&c);
}

static void test_fault_link_flap(void)
{
    Ctx c;
    Rings r;
    TxRing t;
    uint8_t f[100];

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    setup_tx(&c, &t);
    make_frame(f, sizeof(f));
    prop_set(&c, "fault-link-flap-down-ms", 100);
    prop_set(&c, "fault-link-flap", 1);
    g_assert_cmpint(fired(&c, "link-flap"), ==, 1);
    g_assert_cmphex(mdio_read(&c, 1, 1) & 0x04, ==, 0);     /* link down */
    send_frame(&c, f, sizeof(f));                           /* dropped */
    g_assert_true(wait_cnt(&c, "rx_drop_disabled", 1));
    tx_desc(&c, &t, 0, 100, 0);
    wr(&c, TX_TAIL(0), 1);
    g_assert_true(wait_hwb(&c, t.hwb, 1));
    g_assert_cmpint(cnt(&c, "tx_drop_link_down"), ==, 1);
    qtest_clock_step(c.qs->qts, 100 * 1000 * 1000);
    g_assert_cmphex(mdio_read(&c, 1, 1) & 0x04, ==, 0x04);  /* up again */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));

    /* a short flap nobody polled during: BMSR link status latched low */
    prop_set(&c, "fault-link-flap", 1);
    qtest_clock_step(c.qs->qts, 100 * 1000 * 1000);
    g_assert_cmphex(mdio_read(&c, 1, 1) & 0x04, ==, 0);
    g_assert_cmphex(mdio_read(&c, 1, 1) & 0x04, ==, 0x04);
    g_assert_cmpint(fired(&c, "link-flap"), ==, 2);

    /* rate form: one flap per period until cleared */
    prop_set(&c, "fault-link-flap-period-ms", 200);
    prop_set(&c, "fault-link-flap-every", 1);
    qtest_clock_step(c.qs->qts, 200 * 1000 * 1000);
    qtest_clock_step(c.qs->qts, 200 * 1000 * 1000);
    g_assert_cmpint(fired(&c, "link-flap"), ==, 5);
    prop_set_true(&c, "fault-clear");
    g_assert_cmpint(prop_get(&c, "fault-link-flap-every"), ==, 0);
    g_assert_cmphex(mdio_read(&c, 1, 1) & 0x04, ==, 0);     /* latched */
    g_assert_cmphex(mdio_read(&c, 1, 1) & 0x04, ==, 0x04);
    ctx_fini(&c);
}

static void test_fault_spurious_irq(void)
{
    Ctx c;
    int v;

    ctx_init(&c, true);
    prop_set(&c, "fault-spurious-irq-vectors", (1u << 3) | (1u << 5));
    prop_set(&c, "fault-spurious-irq-period-us", 100);
    prop_set(&c, "fault-spurious-irq", 3);
    /* first one at once, then one per period, on vectors 3, 5, 3 */
    g_assert_cmphex(msix_seen(&c, 3), ==, 0x103);
    qtest_clock_step(c.qs->qts, 100 * 1000);
    g_assert_cmphex(msix_seen(&c, 5), ==, 0x105);
    qtest_clock_step(c.qs->qts, 100 * 1000);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0x103);
    qtest_clock_step(c.qs->qts, 100 * 1000);
    for (v = 0; v < 8; v++) {
        g_assert_cmphex(msix_seen(&c, v), ==, 0);
    }
    g_assert_cmpint(fired(&c, "spurious-irq"), ==, 3);
    g_assert_cmpint(cnt_arr(&c, "irq_spurious_per_vector", 3), ==, 2);
    g_assert_cmpint(cnt_arr(&c, "irq_spurious_per_vector", 5), ==, 1);
    g_assert_cmpint(cnt_arr(&c, "irq_per_vector", 3), ==, 0);
    /* nothing pending in the device */
    g_assert_cmphex(rd(&c, INT_STS), ==, 0);

    /* every 2nd tick */
    prop_set(&c, "fault-spurious-irq-vectors", 1u << 6);
    prop_set(&c, "fault-spurious-irq-every", 2);
    for (v = 0; v < 4; v++) {
        qtest_clock_step(c.qs->qts, 100 * 1000);
    }
    g_assert_cmpint(fired(&c, "spurious-irq"), ==, 5);
    g_assert_cmphex(msix_seen(&c, 6), ==, 0x106);
    prop_set_true(&c, "fault-clear");
    qtest_clock_step(c.qs->qts, 1000 * 1000);
    g_assert_cmpint(fired(&c, "spurious-irq"), ==, 5);
    ctx_fini(&c);
}

/*
 * Interrupt moderation, ABS mode (TMODE 0, what the driver writes with
 * LAN743X_INT_MOD): the timer starts at the first event after the vector
 * was idle and the message goes when the interval expires.  SW_GP routed
 * by its own INT_VEC_MAP2 / INT_MOD_MAP2 nibble (15:12).
 */
static void mod_setup_sw_gp(Ctx *c, uint32_t cfg0)
{
    wr(c, INT_VEC_MAP2, 3u << 12);              /* SW_GP -> vector 3 */
    wr(c, INT_MOD_MAP2, 0x00FF0FFF);            /* SW_GP -> INT_MOD_CFG0 */
    wr(c, INT_MOD_CFG0, cfg0);
    wr(c, INT_VEC_EN_SET, 0xFF);
    wr(c, INT_EN_SET, INT_BIT_MAS | INT_BIT_SW_GP);
    qtest_clock_step(c->qs->qts, 1000 * 1000);
}

/* a lone event waits the interval; the count goes to irq_moderated */
static void test_counters_irq_moderated(void)
{
    Ctx c;

    ctx_init(&c, true);
    mod_setup_sw_gp(&c, 100);                   /* 100 us, ABS */
    wr(&c, INT_SET, INT_BIT_SW_GP);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0);   /* not at once */
    g_assert_cmpint(cnt(&c, "irq_moderated"), ==, 1);
    qtest_clock_step(c.qs->qts, 99 * 1000);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0);
    qtest_clock_step(c.qs->qts, 1000);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0x103);
    g_assert_cmpint(cnt_arr(&c, "irq_per_vector", 3), ==, 1);
    /* serviced; the next event after idle starts a new interval */
    wr(&c, INT_STS, INT_BIT_SW_GP);
    qtest_clock_step(c.qs->qts, 1000 * 1000);
    wr(&c, INT_SET, INT_BIT_SW_GP);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0);
    qtest_clock_step(c.qs->qts, 100 * 1000);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0x103);
    g_assert_cmpint(cnt(&c, "irq_moderated"), ==, 2);
    ctx_fini(&c);
}

/*
 * RX0 on MSI-X vector 2, its interrupt enabled, the ring set up; an
 * INTERVAL > 0 also maps RX0 to INT_MOD_CFG2 with that ABS interval (us).
 */
static void rx0_on_vector2(Ctx *c, Rings *r, uint32_t interval)
{
    wr(c, INT_VEC_MAP0, 2);                     /* RX0 -> vector 2 */
    if (interval) {
        wr(c, INT_MOD_MAP0, 2);                 /* RX0 -> INT_MOD_CFG2 */
        wr(c, INT_MOD_CFG0 + 8, interval);
    }
    wr(c, INT_VEC_EN_SET, 1u << 2);
    wr(c, INT_EN_SET, INT_BIT_MAS | INT_BIT_RX0);
    setup_rx(c, r, 0);
}

/* two RX frames within the interval share one message */
static void test_irq_mod_abs_batch(void)
{
    Ctx c;
    Rings r;
    uint8_t f[64];

    ctx_init(&c, true);
    rx0_on_vector2(&c, &r, 400);                /* the driver's value */
    qtest_clock_step(c.qs->qts, 1000 * 1000);   /* idle for a while */
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    g_assert_cmphex(msix_seen(&c, 2), ==, 0);   /* a lone frame waits */
    qtest_clock_step(c.qs->qts, 200 * 1000);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    g_assert_cmphex(msix_seen(&c, 2), ==, 0);
    qtest_clock_step(c.qs->qts, 200 * 1000);    /* 400 us after frame 1 */
    g_assert_cmphex(msix_seen(&c, 2), ==, 0x102);
    qtest_clock_step(c.qs->qts, 1000 * 1000);
    g_assert_cmphex(msix_seen(&c, 2), ==, 0);
    g_assert_cmpint(cnt_arr(&c, "irq_per_vector", 2), ==, 1);
    ctx_fini(&c);
}

/*
 * The write-back to interrupt delay, per vector, in virtual time: two
 * frames 200 us apart under a 400 us ABS interval wait 400 and 200 us for
 * their message; a frame written back after the message (vector already
 * signalled) is counted as masked and not in the histogram; one whose
 * status the driver clears before the message is unreported.
 */
/*
 * INT_MOD_CFG changes are logged with their virtual time, writes of the
 * same value counted but not logged, the oldest change dropped once the log
 * is full; an RX channel's last write-back time is kept.
 */
static void test_irq_int_mod_log(void)
{
    Ctx c;
    Rings r;
    uint8_t f[64];
    int64_t t0, wb, i, n;
    QDict *d;
    QList *log, *e;

    ctx_init(&c, true);
    rx0_on_vector2(&c, &r, 400);
    t0 = cnt(&c, "vclock_ns");
    g_assert_cmpint(cnt_arr(&c, "int_mod_cfg", 2), ==, 400);
    g_assert_cmpint(cnt_arr(&c, "int_mod_writes", 2), ==, 1);
    g_assert_cmpint(cnt_arr(&c, "int_mod_changes", 2), ==, 1);
    g_assert_cmpint(cnt_arr(&c, "rx_last_wb_ns", 0), ==, 0);
    qtest_clock_step(c.qs->qts, 1000 * 1000);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    wb = cnt_arr(&c, "rx_last_wb_ns", 0);
    g_assert_cmpint(wb, >=, t0 + 1000 * 1000);
    qtest_clock_step(c.qs->qts, 3000 * 1000);
    wr(&c, INT_MOD_CFG0 + 8, 400);              /* the same value */
    wr(&c, INT_MOD_CFG0 + 8, 0x2000000 | 1);
    g_assert_cmpint(cnt_arr(&c, "int_mod_writes", 2), ==, 3);
    g_assert_cmpint(cnt_arr(&c, "int_mod_changes", 2), ==, 2);
    d = counters(&c);
    log = qobject_to(QList, list_at(qdict_get_qlist(d, "int_mod_log"), 2));
    g_assert_cmpint(qlist_size(log), ==, 2);
    e = qobject_to(QList, list_at(log, 1));
    g_assert_cmpint(obj_int(list_at(e, 0)) - wb, ==, 3000 * 1000);
    g_assert_cmpint(obj_int(list_at(e, 1)), ==, 0x2000000 | 1);
    qobject_unref(d);
    /* ten more changes: the log keeps the last eight, oldest first */
    for (i = 0; i < 10; i++) {
        qtest_clock_step(c.qs->qts, 1000);
        wr(&c, INT_MOD_CFG0 + 8, 0x2000000 | (100 + i));
    }
    d = counters(&c);
    log = qobject_to(QList, list_at(qdict_get_qlist(d, "int_mod_log"), 2));
    n = qlist_size(log);
    g_assert_cmpint(n, ==, 8);
    for (i = 0; i < n; i++) {
        e = qobject_to(QList, list_at(log, i));
        g_assert_cmpint(obj_int(list_at(e, 1)), ==, 0x2000000 | (102 + i));
    }
    qobject_unref(d);
    g_assert_cmpint(cnt_arr(&c, "int_mod_changes", 2), ==, 12);
    ctx_fini(&c);
}

static void test_irq_wb_delay_hist(void)
{
    Ctx c;
    Rings r;
    uint8_t f[64];
    int b200, b400, b, bins;
    QDict *d;
    QList *h;

    ctx_init(&c, true);
    rx0_on_vector2(&c, &r, 400);
    qtest_clock_step(c.qs->qts, 1000 * 1000);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    qtest_clock_step(c.qs->qts, 200 * 1000);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    g_assert_cmpint(cnt_arr(&c, "wb_delay_frames", 2), ==, 0);
    qtest_clock_step(c.qs->qts, 200 * 1000);
    g_assert_cmphex(msix_seen(&c, 2), ==, 0x102);
    g_assert_cmpint(cnt_arr(&c, "wb_delay_frames", 2), ==, 2);
    g_assert_cmpint(cnt_arr(&c, "wb_delay_sum_ns", 2), ==, 600 * 1000);
    g_assert_cmpint(cnt_arr(&c, "wb_delay_max_ns", 2), ==, 400 * 1000);
    b200 = wb_delay_bin(&c, 200);
    b400 = wb_delay_bin(&c, 400);
    g_assert_cmpint(b200, <, b400);
    d = counters(&c);
    bins = qlist_size(qdict_get_qlist(d, "wb_delay_bin_lower_us"));
    h = qobject_to(QList, list_at(qdict_get_qlist(d,
                                                  "wb_delay_hist_per_vector"),
                                  2));
    g_assert_cmpint(bins, >, b400);
    for (b = 0; b < bins; b++) {
        g_assert_cmpint(obj_int(list_at(h, b)), ==, b == b200 || b == b400);
    }
    qobject_unref(d);
    g_assert_cmpint(cnt_arr2(&c, "wb_delay_hist_per_vector", 0, b200), ==, 0);
    /* the status is still set, the vector signalled: this one is polled */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 3));
    g_assert_cmpint(cnt_arr(&c, "wb_masked_frames", 2), ==, 1);
    g_assert_cmpint(cnt_arr(&c, "wb_delay_frames", 2), ==, 2);
    /* serviced; a frame whose status is cleared before its message */
    wr(&c, DMAC_INT_STS, 1u << 16);
    qtest_clock_step(c.qs->qts, 1000 * 1000);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 4));
    wr(&c, DMAC_INT_STS, 1u << 16);
    g_assert_cmpint(cnt_arr(&c, "wb_unreported_frames", 2), ==, 1);
    qtest_clock_step(c.qs->qts, 1000 * 1000);
    g_assert_cmphex(msix_seen(&c, 2), ==, 0);
    g_assert_cmpint(cnt_arr(&c, "wb_delay_frames", 2), ==, 2);
    ctx_fini(&c);
}

/*
 * With write-back batched on the interrupt timer (WB_THRES 3 +
 * WB_ON_INT_TMR, as the driver programs it) the frames wait in the batch,
 * not after their write-back: each frame's delay still counts from when it
 * was in the ring, 400 and 200 us.
 */
static void test_irq_wb_delay_batched(void)
{
    Ctx c;
    Rings r;
    uint8_t f[64];

    ctx_init(&c, true);
    rx0_on_vector2(&c, &r, 400);
    wr(&c, RX_CFG_A(0), (1u << 30) | (3u << 24) | (1u << 5));
    qtest_clock_step(c.qs->qts, 1000 * 1000);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_frames", 1));
    qtest_clock_step(c.qs->qts, 200 * 1000);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_frames", 2));
    g_assert_cmphex(msix_seen(&c, 2), ==, 0);
    qtest_clock_step(c.qs->qts, 200 * 1000);    /* the batch's timer */
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    g_assert_cmphex(msix_seen(&c, 2), ==, 0x102);
    g_assert_cmpint(cnt_arr(&c, "wb_delay_frames", 2), ==, 2);
    g_assert_cmpint(cnt_arr(&c, "wb_delay_sum_ns", 2), ==, 600 * 1000);
    g_assert_cmpint(cnt_arr(&c, "wb_delay_max_ns", 2), ==, 400 * 1000);
    ctx_fini(&c);
}

/* INTERVAL is 13 bits: 0x2000 | 50 is 50 units; CREDIT (bit 16) holds off */
static void test_irq_mod_interval_bits(void)
{
    Ctx c;

    ctx_init(&c, true);
    mod_setup_sw_gp(&c, 0x2000 | 50);
    wr(&c, INT_SET, INT_BIT_SW_GP);
    qtest_clock_step(c.qs->qts, 50 * 1000);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0x103);
    wr(&c, INT_STS, INT_BIT_SW_GP);
    /* TMODE CREDIT: at once after idle, then held off for the interval */
    wr(&c, INT_MOD_CFG0, (1u << 16) | 50);
    qtest_clock_step(c.qs->qts, 1000 * 1000);
    wr(&c, INT_SET, INT_BIT_SW_GP);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0x103);
    wr(&c, INT_STS, INT_BIT_SW_GP);
    wr(&c, INT_SET, INT_BIT_SW_GP);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0);
    qtest_clock_step(c.qs->qts, 50 * 1000);
    g_assert_cmphex(msix_seen(&c, 3), ==, 0x103);
    ctx_fini(&c);
}

/* rate: 1000-byte frames at 10 Mbit/s take 819.2 us each on the wire */
#define WIRE_NS_1000_AT_10 ((1000 + 4 + 8 + 12) * 8 * 1000 / 10)

static void test_rate_tx(void)
{
    Ctx c;
    TxRing t;
    int i;

    ctx_init(&c, false);
    setup_tx(&c, &t);
    prop_set(&c, "rate", 10);
    prop_set(&c, "rate-burst-us", 0);
    prop_set(&c, "rate-catchup-us", 0);
    g_assert_cmpint(cnt(&c, "rate_mbps"), ==, 10);
    for (i = 0; i < 3; i++) {
        tx_desc(&c, &t, i, 1000, 0);
    }
    wr(&c, TX_TAIL(0), 3);
    /* the first frame is fetched and waits until it has left the wire */
    g_assert_true(wait_hwb(&c, t.hwb, 1));
    g_assert_cmpint(rd(&c, TX_HEAD(0)), ==, 1);
    g_assert_cmpint(cnt(&c, "tx_pace_holds"), ==, 1);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 0);
    qtest_clock_step(c.qs->qts, WIRE_NS_1000_AT_10 - 1000);
    g_assert_cmpint(rd(&c, TX_HEAD(0)), ==, 1);
    qtest_clock_step(c.qs->qts, 1000);
    g_assert_cmpint(rd(&c, TX_HEAD(0)), ==, 2);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 1);
    /*
     * the wire meter: 1024 bytes (FCS, preamble, IFG) handed over when they
     * had left the wire, no bit early (no burst, no catch-up allowed)
     */
    g_assert_cmpint(cnt(&c, "tx_wire_bytes"), ==, 1024);
    g_assert_cmpint(cnt(&c, "tx_wire_excess_max_bits"), ==, 0);
    /* unpaced from now on: the rest goes at once */
    prop_set(&c, "rate", 0);
    g_assert_cmpint(rd(&c, TX_HEAD(0)), ==, 3);
    drain_sock(&c, 3);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 3);

    /* rate-burst-us: frames may run 2 ms ahead of the wire: 3 go at once */
    prop_set(&c, "rate-burst-us", 2000);
    prop_set(&c, "rate", 10);
    for (i = 3; i < 7; i++) {
        tx_desc(&c, &t, i, 1000, 0);
    }
    wr(&c, TX_TAIL(0), 7);
    /* two sent, the third fetched into the FIFO, waiting */
    g_assert_cmpint(rd(&c, TX_HEAD(0)), ==, 6);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 5);
    qtest_clock_step(c.qs->qts, 3 * WIRE_NS_1000_AT_10 - 2000 * 1000);
    g_assert_cmpint(rd(&c, TX_HEAD(0)), ==, 7);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 6);
    /*
     * the wire meter: the third frame left 2 ms before its last bit, 3 x
     * 8192 bits in 457.6 us: exactly rate-burst-us x rate more than the
     * wire carried in that window, the bound (the catch-up is not used:
     * the timer fired on time)
     */
    g_assert_cmpint(cnt(&c, "tx_wire_bytes"), ==, 4 * 1024);
    g_assert_cmpint(cnt(&c, "rate_burst_us"), ==, 2000);
    g_assert_cmpint(cnt(&c, "tx_wire_excess_max_bits"), ==,
                    cnt(&c, "rate_burst_us") * cnt(&c, "rate_mbps"));
    prop_set(&c, "rate", 0);
    drain_sock(&c, 4);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 7);
    ctx_fini(&c);
}

static void test_rate_rx(void)
{
    Ctx c;
    Rings r;
    uint8_t f[1000];

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    prop_set(&c, "rate", 10);
    prop_set(&c, "rate-burst-us", 0);
    prop_set(&c, "rate-catchup-us", 0);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    /* a frame is received when its last bit has come off the wire */
    g_assert_true(wait_cnt(&c, "rx_pace_holds", 1));
    g_usleep(20 * 1000);
    g_assert_cmphex(qtest_readl(c.qs->qts, r.rx_hwb), ==, 0xdead);
    qtest_clock_step(c.qs->qts, WIRE_NS_1000_AT_10);
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    g_usleep(20 * 1000);
    g_assert_cmphex(qtest_readl(c.qs->qts, r.rx_hwb), ==, 1);
    qtest_clock_step(c.qs->qts, WIRE_NS_1000_AT_10);
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 2);
    /* the wire meter: each frame taken when it had come off the wire */
    g_assert_cmpint(cnt(&c, "rx_wire_bytes"), ==, 2 * 1024);
    g_assert_cmpint(cnt(&c, "rx_wire_excess_max_bits"), ==, 0);
    ctx_fini(&c);
}


/* ---- per-channel RX FIFO, asynchronous stops, descriptor checks ---- */

/* RX ring of RING 1536-byte buffers on channel ch (filter set by setup_rx) */
static void setup_rx_chan(Ctx *c, Rings *r, int ch)
{
    alloc_rx_ring(c, r, 1536);
    wr(c, DMAC_CMD, 1u << (8 + ch));            /* RX_SWR(ch) */
    wr(c, RX_BASE_ADDRH(ch), r->rx_ring >> 32);
    wr(c, RX_BASE_ADDRL(ch), r->rx_ring & 0xFFFFFFFF);
    wr(c, RX_HWB_ADDRH(ch), r->rx_hwb >> 32);
    wr(c, RX_HWB_ADDRL(ch), r->rx_hwb & 0xFFFFFFFF);
    wr(c, RX_CFG_A(ch), 1u << 5);
    wr(c, RX_CFG_B(ch), RING);
    wr(c, RX_TAIL(ch), RING - 1);
    wr(c, DMAC_CMD, 1u << (4 + ch));            /* START_R(ch) */
    wr(c, FCT_RX_CTL, 1u << (28 + ch));
}

/*
 * RSS with a zero key: every IPv4/UDP frame hashes to 0, RFE_INDX entry 0
 * sends it to channel 1; non-IP frames stay on channel 0.
 */
static void steer_ipv4_to_ch1(Ctx *c)
{
    wr(c, RFE_INDX(0), 1);
    wr(c, RFE_RSS_CFG, (7u << 5) | (1u << 10) | (1u << 8) | (1u << 2) | 1);
}

/*
 * rx_fifo_off_ns: the virtual time a channel's FIFO was off, from the
 * disable of an enabled FIFO to its next enable, the period still running
 * included when read; a disable of a FIFO already off and a FIFO never
 * enabled start none; a frame reaching the FIFO meanwhile is dropped.
 */
static void test_rx_fifo_off_ns(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_off_ns", 0), ==, 0);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_off_ns", 1), ==, 0);
    qtest_clock_step(c.qs->qts, 50 * 1000);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_off_ns", 1), ==, 0);

    wr(&c, FCT_RX_CTL, 1u << 24);               /* DIS(0) */
    qtest_clock_step(c.qs->qts, 30 * 1000);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_off_ns", 0), ==, 30 * 1000);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_drop_disabled", 1));
    wr(&c, FCT_RX_CTL, 1u << 24);               /* DIS(0) again */
    qtest_clock_step(c.qs->qts, 20 * 1000);
    wr(&c, FCT_RX_CTL, 1u << 28);               /* EN(0) */
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_off_ns", 0), ==, 50 * 1000);
    qtest_clock_step(c.qs->qts, 40 * 1000);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_off_ns", 0), ==, 50 * 1000);

    wr(&c, FCT_RX_CTL, 1u << 24);               /* a second period */
    qtest_clock_step(c.qs->qts, 7 * 1000);
    wr(&c, FCT_RX_CTL, 1u << 28);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_off_ns", 0), ==, 57 * 1000);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_off_ns", 1), ==, 0);
    ctx_fini(&c);
}

/*
 * A FIFO that overflows: channel 0 stopped, no flow control, a 4 KiB FIFO
 * takes four 1000-byte frames (1004 bytes with FCS); the next two are
 * dropped with FCT_INT_STS.RDFO_0 and STAT_RX_DROPPED_FRAMES.  Channel 1
 * keeps receiving meanwhile (no head-of-line blocking); the start of
 * channel 0 delivers the four in order.
 */
static void test_rx_fifo_overflow(void)
{
    Ctx c;
    Rings r0, r1;
    uint8_t f[1000];
    int i;

    ctx_init(&c, false);
    setup_rx(&c, &r0, 0);
    setup_rx_chan(&c, &r1, 1);
    steer_ipv4_to_ch1(&c);
    prop_set(&c, "rx-fifo-kib", 4);
    prop_set(&c, "dma-stop-us", 0);
    g_assert_cmpint(cnt(&c, "rx_fifo_kib"), ==, 4);

    wr(&c, DMAC_CMD, 1u << 0);                  /* STOP_R(0), at once */
    g_assert_cmphex(rd(&c, DMAC_CMD) & 0x11, ==, 0x01);
    for (i = 0; i < 6; i++) {
        make_frame(f, sizeof(f));
        f[20] = i;
        send_frame(&c, f, sizeof(f));
    }
    g_assert_true(wait_cnt(&c, "rx_fifo_holds", 6));
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_queued", 0), ==, 4);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_overflow", 0), ==, 2);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_bytes", 0), ==, 4 * 1004);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_peak_bytes", 0), ==, 4 * 1004);
    g_assert_cmpint(rd(&c, FCT_RX_USED(0)), ==, 4 * 1004);
    g_assert_cmphex(rd(&c, FCT_INT_STS), ==, 1u << 24);      /* RDFO_0 */
    g_assert_cmpint(rd(&c, STAT_RX_DROPPED), ==, 2);
    /* the MAC took all six: its counters count the two the FIFO dropped */
    g_assert_cmpint(rd(&c, STAT_RX_TOTAL), ==, 6);
    g_assert_cmpint(rd(&c, STAT_RX_UC_BYTES), ==, 6 * 1004);
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 0);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);

    /* channel 1 is not held up by channel 0's stop */
    build_ipv4_udp(f, 200, true);
    send_frame(&c, f, 200);
    g_assert_true(wait_hwb(&c, r1.rx_hwb, 1));
    g_assert_cmpint(cnt_arr(&c, "rx_frames_per_channel", 1), ==, 1);
    g_assert_cmphex(qtest_readl(c.qs->qts, r0.rx_hwb), ==, 0xdead);

    /* start: the FIFO drains into the ring, oldest first */
    wr(&c, DMAC_CMD, 1u << 4);
    g_assert_true(wait_hwb(&c, r0.rx_hwb, 4));
    for (i = 0; i < 4; i++) {
        g_assert_cmpint(qtest_readb(c.qs->qts, r0.rx_buf[i] + 20), ==, i);
    }
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_bytes", 0), ==, 0);
    g_assert_cmpint(rd(&c, FCT_RX_USED(0)), ==, 0);
    wr(&c, FCT_INT_STS, 1u << 24);              /* W1C */
    g_assert_cmphex(rd(&c, FCT_INT_STS), ==, 0);
    ctx_fini(&c);
}

/*
 * Flow control (MAC_FLOW.TX_FCEN, FCT_FLOW REQ_EN, ON 2 KiB, OFF 512 B):
 * the FIFO level reaching ON sends XOFF; a link partner that honours it
 * at once (peer-pause=1, peer-pause-lag-frames=0): later frames wait at
 * the sender, none is lost; the drain below OFF sends XON.  With
 * peer-pause=0 the FIFO overflows.
 */
static void test_rx_fifo_pause(void)
{
    Ctx c;
    Rings r;
    uint8_t f[1000];
    int i;

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    prop_set(&c, "dma-stop-us", 0);
    prop_set(&c, "peer-pause", 1);
    prop_set(&c, "peer-pause-lag-frames", 0);
    wr(&c, MAC_FLOW, (1u << 30) | 0xFFFF);
    wr(&c, FCT_FLOW(0), (1u << 8) | (1u << 7) | 4);
    wr(&c, DMAC_CMD, 1u << 0);
    make_frame(f, sizeof(f));
    for (i = 0; i < 5; i++) {
        send_frame(&c, f, sizeof(f));
    }
    g_assert_true(wait_cnt(&c, "rx_pause_holds", 1));
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_queued", 0), ==, 3);
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 1);      /* XOFF */
    g_assert_cmpint(rd(&c, STAT_TX_PAUSE), ==, 1);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_overflow", 0), ==, 0);

    wr(&c, DMAC_CMD, 1u << 4);
    g_assert_true(wait_hwb(&c, r.rx_hwb, 5));
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 2);      /* + XON */
    g_assert_cmpint(rd(&c, STAT_RX_DROPPED), ==, 0);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 5);

    /* a partner that ignores pause frames: the FIFO overflows */
    prop_set(&c, "peer-pause", 0);
    prop_set(&c, "rx-fifo-kib", 2);
    wr(&c, DMAC_CMD, 1u << 0);
    for (i = 0; i < 3; i++) {
        send_frame(&c, f, sizeof(f));
    }
    g_assert_true(wait_cnt(&c, "rx_fifo_holds", 6));     /* 3 + 3 */
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_overflow", 0), ==, 1);
    g_assert_cmpint(rd(&c, STAT_RX_DROPPED), ==, 1);
    ctx_fini(&c);
}

/* ---- the link partner and pause frames ---- */

#define PAUSE_MAX_NS    (0xFFFFLL * 512)    /* FCPT 0xFFFF at 1 Gbit/s */

/*
 * Channel 0 stopped behind its FIFO with flow control on (ON 2 KiB, OFF
 * 512 B, pause time fcpt); peer: peer-pause to set, -1 = the default.
 */
static void setup_pause(Ctx *c, Rings *r, int peer, uint32_t fcpt)
{
    setup_rx(c, r, 0);
    prop_set(c, "dma-stop-us", 0);
    if (peer >= 0) {
        prop_set(c, "peer-pause", peer);
    }
    wr(c, MAC_FLOW, (1u << 30) | fcpt);         /* TX_FCEN | FCPT */
    wr(c, FCT_FLOW(0), (1u << 8) | (1u << 7) | 4);
    wr(c, DMAC_CMD, 1u << 0);                   /* STOP_R(0), at once */
}

/* n frames of 1000 bytes (1004 in the FIFO) from the link partner */
static void send_n(Ctx *c, int n)
{
    uint8_t f[1000];
    int i;

    make_frame(f, sizeof(f));
    for (i = 0; i < n; i++) {
        f[20] = i;
        send_frame(c, f, sizeof(f));
    }
}

/*
 * The default link partner ignores pause frames: the MAC sends XOFF at ON
 * (and refreshes it), but every frame the wire brings is taken and what
 * does not fit in the FIFO is dropped and counted; QEMU holds none back.
 */
static void test_peer_ignores_pause(void)
{
    Ctx c;
    Rings r;

    ctx_init(&c, false);
    setup_pause(&c, &r, -1, 0xFFFF);
    prop_set(&c, "rx-fifo-kib", 4);
    send_n(&c, 8);
    g_assert_true(wait_cnt(&c, "rx_fifo_holds", 8));     /* all 8 taken */
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_queued", 0), ==, 4);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_overflow", 0), ==, 4);
    g_assert_cmpint(rd(&c, STAT_RX_DROPPED), ==, 4);
    g_assert_cmpint(cnt(&c, "rx_pause_holds"), ==, 0);
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 1);      /* XOFF */
    g_assert_cmpint(cnt(&c, "rx_frames_after_xoff"), ==, 0);
    g_assert_cmpint(cnt(&c, "peer_paused_ns"), ==, 0);
    /* half the pause time later: XOFF again, ignored again */
    qtest_clock_step(c.qs->qts, PAUSE_MAX_NS / 2);
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 2);
    send_n(&c, 1);
    g_assert_true(wait_cnt(&c, "rx_fifo_holds", 9));
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_overflow", 0), ==, 5);
    g_assert_cmpint(cnt(&c, "rx_pause_holds"), ==, 0);
    /* the start drains the four: XON */
    wr(&c, DMAC_CMD, 1u << 4);
    g_assert_true(wait_hwb(&c, r.rx_hwb, 4));
    g_assert_cmpint(cnt(&c, "tx_xon_frames"), ==, 1);
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 3);
    g_assert_cmpint(rd(&c, STAT_TX_PAUSE), ==, 3);
    g_assert_cmpint(cnt(&c, "peer_paused_ns"), ==, 0);
    ctx_fini(&c);
}

/*
 * A partner that honours pause at once (peer-pause=1, no lag): an XOFF of
 * FCPT 0xFFFF holds it 0xFFFF x 512 bit times (33,553,920 ns at 1 Gbit/s);
 * the MAC sends XOFF again after half of it while the FIFO is above OFF.
 * With TX_FCEN cleared no pause frame goes out (no refresh, no XON): the
 * partner resumes exactly when the last pause time runs out.  Then the
 * same at 100 Mbit/s with FCPT 1000: 1000 x 512 bits = 5,120,000 ns.
 */
static void test_peer_pause_time(void)
{
    const int64_t q = PAUSE_MAX_NS;
    Ctx c;
    Rings r;
    QTestState *qts;
    int64_t holds;

    ctx_init(&c, false);
    qts = c.qs->qts;
    setup_pause(&c, &r, 1, 0xFFFF);
    prop_set(&c, "peer-pause-lag-frames", 0);
    send_n(&c, 4);
    g_assert_true(wait_cnt(&c, "rx_pause_holds", 1));
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_queued", 0), ==, 3);
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 1);
    qtest_clock_step(qts, q / 2 - 1);
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 1);
    qtest_clock_step(qts, 1);
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 2);      /* refresh */
    wr(&c, MAC_FLOW, 0xFFFF);                   /* TX_FCEN off */
    qtest_clock_step(qts, q - 1);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_queued", 0), ==, 3);
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 2);
    g_assert_cmpint(cnt(&c, "tx_xon_frames"), ==, 0);
    g_assert_cmpint(cnt(&c, "peer_paused_ns"), ==, q / 2 + q - 1);
    qtest_clock_step(qts, 1);
    g_assert_true(wait_cnt(&c, "rx_fifo_holds", 4));     /* it sends again */
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_queued", 0), ==, 4);
    g_assert_cmpint(cnt(&c, "peer_paused_ns"), ==, q / 2 + q);

    /* 100 Mbit/s, FCPT 1000 */
    wr(&c, DMAC_CMD, 1u << 4);
    g_assert_true(wait_hwb(&c, r.rx_hwb, 4));
    g_assert_cmpint(cnt(&c, "tx_xon_frames"), ==, 0);        /* TX_FCEN off */
    prop_set(&c, "rate", 100);
    wr(&c, MAC_FLOW, (1u << 30) | 1000);
    wr(&c, DMAC_CMD, 1u << 0);
    holds = cnt(&c, "rx_pause_holds");
    send_n(&c, 4);
    g_assert_true(wait_cnt(&c, "rx_pause_holds", holds + 1));
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 3);
    wr(&c, MAC_FLOW, 1000);                     /* no refresh */
    qtest_clock_step(qts, 1000 * 512 * 10 - 1);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_queued", 0), ==, 7);
    qtest_clock_step(qts, 1);
    g_assert_true(wait_cnt(&c, "rx_fifo_holds", 8));
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_queued", 0), ==, 8);
    g_assert_cmpint(cnt(&c, "peer_paused_ns"), ==, q / 2 + q + 5120000);
    ctx_fini(&c);
}

/*
 * XON ends the pause early: 1 ms into a 33.5 ms pause the FIFO drains
 * below OFF, the MAC sends XON and the frame the partner held comes at
 * once; no refresh or expiry follows.  With the default lag one frame
 * lands after the XOFF.
 */
static void test_peer_pause_xon(void)
{
    Ctx c;
    Rings r;

    ctx_init(&c, false);
    setup_pause(&c, &r, 1, 0xFFFF);
    send_n(&c, 5);
    g_assert_true(wait_cnt(&c, "rx_pause_holds", 1));
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_queued", 0), ==, 4);
    qtest_clock_step(c.qs->qts, 1000 * 1000);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    wr(&c, DMAC_CMD, 1u << 4);                  /* drain: XON */
    g_assert_true(wait_hwb(&c, r.rx_hwb, 5));
    g_assert_cmpint(cnt(&c, "tx_xon_frames"), ==, 1);
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 2);
    g_assert_cmpint(cnt(&c, "peer_paused_ns"), ==, 1000 * 1000);
    qtest_clock_step(c.qs->qts, PAUSE_MAX_NS);
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 2);
    g_assert_cmpint(cnt(&c, "peer_paused_ns"), ==, 1000 * 1000);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 5);
    g_assert_cmpint(rd(&c, STAT_RX_DROPPED), ==, 0);
    ctx_fini(&c);
}

/*
 * The partner finishes what it has in flight (peer-pause-lag-frames,
 * default 1): that many frames land after the XOFF, in the FIFO, or over
 * it (dropped) when it is full.
 */
static void test_peer_pause_lag(void)
{
    Ctx c;
    Rings r;
    int64_t holds;

    ctx_init(&c, false);
    setup_pause(&c, &r, 1, 0xFFFF);
    send_n(&c, 5);          /* the 3rd reaches ON, the 4th lands, 5th held */
    g_assert_true(wait_cnt(&c, "rx_pause_holds", 1));
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_queued", 0), ==, 4);
    g_assert_cmpint(cnt(&c, "rx_frames_after_xoff"), ==, 1);
    g_assert_cmpint(cnt(&c, "tx_pause_frames"), ==, 1);
    wr(&c, DMAC_CMD, 1u << 4);
    g_assert_true(wait_hwb(&c, r.rx_hwb, 5));

    /* two in flight, a 3 KiB FIFO: both overflow */
    prop_set(&c, "peer-pause-lag-frames", 2);
    prop_set(&c, "rx-fifo-kib", 3);
    wr(&c, DMAC_CMD, 1u << 0);
    holds = cnt(&c, "rx_pause_holds");
    send_n(&c, 6);
    g_assert_true(wait_cnt(&c, "rx_pause_holds", holds + 1));
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_queued", 0), ==, 4 + 3);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_overflow", 0), ==, 2);
    g_assert_cmpint(cnt(&c, "rx_frames_after_xoff"), ==, 1 + 2);
    g_assert_cmpint(rd(&c, STAT_RX_DROPPED), ==, 2);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 5);
    ctx_fini(&c);
}

/*
 * The link partner's pause ability in the PHY's LPA (MII reg 5): PAUSE
 * (bit 10) by default, neither PAUSE nor ASYM_PAUSE (bit 11) with
 * phy-lp-pause=0; runtime settable.
 */
static void test_phy_lp_pause(void)
{
    Ctx c;

    ctx_init(&c, false);
    g_assert_cmphex(mdio_read(&c, 1, 5), ==, 0xC5E1);
    ctx_fini(&c);
    ctx_init_dev(&c, false, "lan7430,phy-lp-pause=0");
    g_assert_cmphex(mdio_read(&c, 1, 5), ==, 0xC1E1);
    prop_set(&c, "phy-lp-pause", 1);
    g_assert_cmphex(mdio_read(&c, 1, 5), ==, 0xC5E1);
    ctx_fini(&c);
}

/*
 * PAUSE frames from the link partner: counted in STAT_RX_PAUSE_FRAMES and
 * consumed (no RX frame, none of the other RX counters); a MAC control
 * frame of another opcode is an ordinary frame.  With MAC_FLOW.RX_FCEN the
 * pause time holds the transmitter: a frame fetched during the pause
 * starts on the wire when it has elapsed; XON (pause time 0) ends it.
 * Without RX_FCEN the pause is counted and holds nothing.
 */
static void send_pause(Ctx *c, uint16_t quanta, uint16_t opcode,
                       const uint8_t *da)
{
    uint8_t f[18];

    memcpy(f, da, 6);
    memcpy(f + 6, "\x02\x00\x00\x00\x00\x02", 6);
    stw_be_p(f + 12, 0x8808);
    stw_be_p(f + 14, opcode);
    stw_be_p(f + 16, quanta);
    send_frame(c, f, sizeof(f));    /* short: the wire pads it to 64 */
}

/* a PAUSE frame from the partner, its wire time, the model's count n */
static void peer_pause(Ctx *c, uint16_t quanta, int n)
{
    static const uint8_t pause_da[6] = { 0x01, 0x80, 0xC2, 0x00, 0x00, 0x01 };

    send_pause(c, quanta, 1, pause_da);
    qtest_clock_step(c->qs->qts, (64 + 8 + 12) * 8);
    g_assert_true(wait_cnt(c, "rx_pause_frames", n));
}

/* TX descriptor i (a 100-byte frame) fetched and written back */
static void tx_frame_100(Ctx *c, TxRing *t, int i)
{
    tx_desc(c, t, i, 100, 0);
    wr(c, TX_TAIL(0), i + 1);
    g_assert_true(wait_hwb(c, t->hwb, i + 1));
}

static void test_rx_pause_frames(void)
{
    static const uint8_t pause_da[6] = { 0x01, 0x80, 0xC2, 0x00, 0x00, 0x01 };
    static const uint8_t bcast[6] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF };
    /* a 100-byte frame on the wire: FCS, preamble and IFG, at 1 Gbit/s */
    const int64_t wire_100 = (100 + 4 + 8 + 12) * 8;
    Ctx c;
    Rings r;
    TxRing t;
    uint8_t f[100];

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    setup_tx(&c, &t);
    prop_set_true(&c, "reset-counters");

    /* flow control off: counted, consumed, nothing held */
    send_pause(&c, 0xFFFF, 1, pause_da);
    g_assert_true(wait_cnt(&c, "rx_pause_frames", 1));
    g_assert_cmpint(rd(&c, STAT_RX_PAUSE), ==, 1);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    g_assert_cmpint(rd(&c, STAT_RX_MC_FRAMES), ==, 0);
    g_assert_cmpint(rd(&c, STAT_RX_64), ==, 0);
    g_assert_cmpint(rd(&c, STAT_RX_TOTAL), ==, 0);
    tx_frame_100(&c, &t, 0);
    drain_sock(&c, 1);
    g_assert_cmpint(cnt(&c, "tx_pause_delayed"), ==, 0);
    g_assert_cmpint(rd(&c, STAT_TX_64 + 4), ==, 1);     /* 65-127 */

    /* another opcode (and no PAUSE address): an ordinary broadcast */
    send_pause(&c, 0, 0, bcast);
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    g_assert_cmpint(rd(&c, STAT_RX_PAUSE), ==, 1);
    g_assert_cmpint(rd(&c, STAT_RX_BC_FRAMES), ==, 1);
    g_assert_cmpint(rd(&c, STAT_RX_64), ==, 1);         /* padded, + FCS */

    /* the size buckets and byte counts count the FCS */
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    g_assert_cmpint(rd(&c, STAT_RX_65_127), ==, 1);
    g_assert_cmpint(rd(&c, STAT_RX_UC_BYTES), ==, sizeof(f) + 4);
    g_assert_cmpint(rd(&c, STAT_RX_TOTAL), ==, 2);

    /* RX_FCEN: 0xFFFF quanta hold the next frame for 33.5 ms */
    wr(&c, MAC_FLOW, 1u << 29);
    prop_set(&c, "rate-burst-us", 0);
    prop_set(&c, "rate-catchup-us", 0);
    peer_pause(&c, 0xFFFF, 2);
    tx_frame_100(&c, &t, 1);
    g_assert_cmpint(cnt(&c, "tx_pause_delayed"), ==, 1);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 1);
    qtest_clock_step(c.qs->qts, PAUSE_MAX_NS + wire_100 - 1);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 1);
    qtest_clock_step(c.qs->qts, 1);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 2);
    drain_sock(&c, 1);

    /* XON ends a pause: the next frame goes at once */
    peer_pause(&c, 0xFFFF, 3);
    peer_pause(&c, 0, 4);
    tx_frame_100(&c, &t, 2);
    qtest_clock_step(c.qs->qts, wire_100);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 3);
    g_assert_cmpint(cnt(&c, "tx_pause_delayed"), ==, 1);
    drain_sock(&c, 1);
    g_assert_cmpint(rd(&c, STAT_RX_PAUSE), ==, 4);
    /* none of them reached the host */
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 2);
    ctx_fini(&c);
}

/*
 * A stop that takes time: STOP_R reads STOP_PENDING (START and STOP) for
 * dma-stop-us; a frame arriving meanwhile goes to the FIFO; then STOPPED
 * and DMAC_INT_STS.RX_STOP.  RX_SWR, FCT RESET and the MAC RX disable
 * also complete on the virtual clock; a frame during the FIFO reset is
 * dropped.
 */
static void test_async_stop(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];
    QTestState *q;

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx(&c, &r, 0);
    qtest_clock_step(q, 100 * 1000);            /* setup's RX_SWR done */
    prop_set(&c, "dma-stop-us", 1000);
    prop_set(&c, "dma-reset-us", 500);
    prop_set(&c, "fifo-reset-us", 500);
    prop_set(&c, "mac-disable-us", 500);
    make_frame(f, sizeof(f));

    wr(&c, DMAC_CMD, 1u << 0);                  /* STOP_R(0) */
    g_assert_cmphex(rd(&c, DMAC_CMD) & 0x11, ==, 0x11);  /* STOP_PENDING */
    g_assert_cmpint(cnt_sub(&c, "async_busy_reads", "dma-stop"), ==, 1);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_fifo_holds", 1));
    qtest_clock_step(q, 999 * 1000);
    g_assert_cmphex(rd(&c, DMAC_CMD) & 0x11, ==, 0x11);
    qtest_clock_step(q, 1000);
    g_assert_cmphex(rd(&c, DMAC_CMD) & 0x11, ==, 0x01);  /* STOPPED */
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 12), ==, 1u << 12);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 0xdead);
    wr(&c, DMAC_CMD, 1u << 4);                  /* START_R(0) */
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    g_assert_cmpint(cnt_sub(&c, "async_started", "dma-stop"), ==, 1);

    /* channel soft reset */
    wr(&c, DMAC_CMD, 1u << 8);
    g_assert_cmphex(rd(&c, DMAC_CMD) & (1u << 8), ==, 1u << 8);
    qtest_clock_step(q, 500 * 1000);
    g_assert_cmphex(rd(&c, DMAC_CMD) & (1u << 8), ==, 0);

    /* FIFO reset: a frame arriving during it is dropped */
    wr(&c, FCT_RX_CTL, 1u << 20);
    g_assert_cmphex(rd(&c, FCT_RX_CTL) & (1u << 20), ==, 1u << 20);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_drop_fifo_reset", 1));
    g_assert_cmpint(rd(&c, STAT_RX_DROPPED), ==, 1);
    qtest_clock_step(q, 500 * 1000);
    g_assert_cmphex(rd(&c, FCT_RX_CTL) & (1u << 20), ==, 0);

    /* MAC RX disable: RXD only once it has completed */
    wr(&c, MAC_RX, rd(&c, MAC_RX) & ~1u);
    g_assert_cmphex(rd(&c, MAC_RX) & 2, ==, 0);
    qtest_clock_step(q, 500 * 1000);
    g_assert_cmphex(rd(&c, MAC_RX) & 2, ==, 2);
    g_assert_cmpint(cnt_sub(&c, "async_busy_reads", "mac-disable"), ==, 1);
    ctx_fini(&c);
}

/*
 * rx-swr-head: the next RX_SWR leaves RX_HEAD reading non-zero (the check
 * in the driver's open/start fails) until the channel is reset again; one
 * opportunity per RX_SWR; fault-clear ends it.
 */
static void test_fault_rx_swr_head(void)
{
    Ctx c;
    Rings r;

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);                        /* asserts RX_HEAD == 0 */
    wr(&c, FCT_RX_CTL, 1u << 24);               /* FIFO 0 off */
    prop_set(&c, "fault-rx-swr-head", 1);
    wr(&c, DMAC_CMD, 1u << 8);                  /* RX_SWR(0): fires */
    g_assert_cmpint(fired(&c, "rx-swr-head"), ==, 1);
    g_assert_cmpint(rd(&c, RX_HEAD(0)), !=, 0);
    g_assert_cmpint(rd(&c, RX_HEAD(0)), !=, 0); /* not a one-shot read */
    g_assert_cmpint(rd(&c, RX_HEAD(1)), ==, 0); /* only that channel */
    wr(&c, DMAC_CMD, 1u << 8);                  /* count used up: works */
    g_assert_cmpint(rd(&c, RX_HEAD(0)), ==, 0);
    g_assert_cmpint(fired(&c, "rx-swr-head"), ==, 1);
    /* fault-clear ends a failed reset too */
    prop_set(&c, "fault-rx-swr-head", 1);
    wr(&c, DMAC_CMD, 1u << (8 + 2));            /* RX_SWR(2) */
    g_assert_cmpint(rd(&c, RX_HEAD(2)), !=, 0);
    prop_set_true(&c, "fault-clear");
    g_assert_cmpint(rd(&c, RX_HEAD(2)), ==, 0);
    g_assert_cmpint(fired(&c, "rx-swr-head"), ==, 2);
    ctx_fini(&c);
}

/*
 * rx-irq-hold: from the frame it fires on, the RX interrupts are not sent
 * for fault-rx-irq-hold-ms; the frames are written back (head, RXFRM
 * status) as usual; when the hold ends the pending interrupt is sent.
 */
static void test_fault_rx_irq_hold(void)
{
    Ctx c;
    Rings r;
    uint8_t f[64];
    QTestState *q;
    int i;

    ctx_init(&c, true);
    q = c.qs->qts;
    rx0_on_vector2(&c, &r, 0);
    make_frame(f, sizeof(f));
    prop_set(&c, "fault-rx-irq-hold-ms", 5);
    prop_set(&c, "fault-rx-irq-hold", 1);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));   /* written back as usual */
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 16), ==, 1u << 16);
    g_assert_cmpint(fired(&c, "rx-irq-hold"), ==, 1);
    for (i = 0; i < 20; i++) {
        g_usleep(1000);
        g_assert_cmphex(msix_seen(&c, 2), ==, 0);
    }
    qtest_clock_step(q, 5 * 1000 * 1000);       /* the hold ends */
    g_assert_cmphex(msix_seen(&c, 2), ==, 0x102);
    /* and the next frame interrupts at once */
    wr(&c, INT_STS, 0xFFFFFFFF);
    wr(&c, DMAC_INT_STS, 1u << 16);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 3));
    g_assert_cmphex(msix_seen(&c, 2), ==, 0x102);
    g_assert_cmpint(fired(&c, "rx-irq-hold"), ==, 1);
    ctx_fini(&c);
}

/*
 * An RX DMA channel reset while its FCT RX FIFO is enabled (the documented
 * close/open sequence disables the FIFO first) is counted in
 * rx_swr_fifo_enabled; with the FIFO disabled, or for another channel,
 * it is not.
 */
static void test_rx_swr_fifo_enabled(void)
{
    Ctx c;
    Rings r;

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);                        /* SWR before FIFO enable */
    g_assert_cmpint(cnt(&c, "rx_swr_fifo_enabled"), ==, 0);
    wr(&c, DMAC_CMD, 1u << (8 + 1));            /* RX_SWR(1), FIFO 1 off */
    g_assert_cmpint(cnt(&c, "rx_swr_fifo_enabled"), ==, 0);
    wr(&c, DMAC_CMD, 1u << 8);                  /* RX_SWR(0), FIFO 0 on */
    g_assert_cmpint(cnt(&c, "rx_swr_fifo_enabled"), ==, 1);
    wr(&c, FCT_RX_CTL, 1u << 24);               /* FIFO 0 off */
    wr(&c, DMAC_CMD, 1u << 8);
    g_assert_cmpint(cnt(&c, "rx_swr_fifo_enabled"), ==, 1);
    ctx_fini(&c);
}

/* an RX/TX tail outside the ring: DESC_TAIL_ERR, DMAC_INT_STS.ERR, ignored */
/*
 * exit-report: the counters JSON is written to the file when QEMU exits
 * (not before), so that the lab can check a run whose guest powered off:
 * here with one descriptor error counted.
 */
static void test_exit_report(void)
{
    g_autofree char *path = g_strdup_printf("/tmp/lan7430-exit-%d.json",
                                            (int)getpid());
    g_autofree char *dev = g_strdup_printf("lan7430,exit-report=%s", path);
    g_autofree char *json = NULL;
    Ctx c;
    Rings r;

    unlink(path);
    ctx_init_dev(&c, false, dev);
    setup_rx(&c, &r, 0);
    wr(&c, RX_TAIL(0), RING);                   /* outside the ring */
    g_assert_cmpint(cnt(&c, "desc_errors"), ==, 1);
    g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
    ctx_fini(&c);
    g_assert_true(g_file_get_contents(path, &json, NULL, NULL));
    g_assert_nonnull(strstr(json, "\"desc_errors\":1,"));
    g_assert_nonnull(strstr(json, "\"wb_freed_ring_writes\":0,"));
    unlink(path);
}

static void test_desc_tail_check(void)
{
    Ctx c;
    Rings r;
    TxRing t;

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    wr(&c, RX_TAIL(0), RING);
    g_assert_cmpint(rd(&c, RX_TAIL(0)), ==, RING - 1);
    g_assert_cmphex(rd(&c, DMAC_RX_ERR_STS(0)) & (1u << 5), ==, 1u << 5);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 21), ==, 1u << 21);
    g_assert_cmpint(cnt(&c, "desc_tail_errors"), ==, 1);
    wr(&c, DMAC_RX_ERR_STS(0), 1u << 5);        /* W1C */
    g_assert_cmphex(rd(&c, DMAC_RX_ERR_STS(0)), ==, 0);
    wr(&c, RX_TAIL(0), RING - 2);               /* in range: taken */
    g_assert_cmpint(rd(&c, RX_TAIL(0)), ==, RING - 2);

    setup_tx(&c, &t);
    wr(&c, TX_TAIL(0), RING + 3);
    g_assert_cmpint(rd(&c, TX_TAIL(0)), ==, 0);
    g_assert_cmphex(rd(&c, DMAC_TX_ERR_STS(0)) & (1u << 5), ==, 1u << 5);
    g_assert_cmpint(cnt(&c, "desc_tail_errors"), ==, 2);

    /* desc-check=0: wrapped, as the older model did */
    prop_set(&c, "desc-check", 0);
    wr(&c, RX_TAIL(0), RING + 1);
    g_assert_cmpint(rd(&c, RX_TAIL(0)), ==, 1);
    g_assert_cmpint(cnt(&c, "desc_tail_errors"), ==, 2);
    ctx_fini(&c);
}

static int64_t desc_err(Ctx *c, const char *kind)
{
    return cnt_sub(c, "desc_errors_by_kind", kind);
}

/*
 * RX: a descriptor below the tail whose OWN is clear when the DMA fetches
 * it (at a frame without prefetch; within PF_THRES of the head when the
 * tail moves) is an RX descriptor read error (DMAC_RX_ERR_STS bit 6):
 * DMAC_INT_STS.ERR, INT_STS.DMA_GEN on its MSI-X vector (INT_VEC_MAP2
 * 19:16), the channel stops; the frame waits in the FIFO.
 */
static void test_desc_rx_own(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];
    QTestState *q;

    ctx_init(&c, true);
    q = c.qs->qts;
    wr(&c, INT_VEC_MAP2, 4u << 16);             /* DMA_GEN -> vector 4 */
    wr(&c, INT_VEC_EN_SET, 1u << 4);
    wr(&c, INT_EN_SET, INT_BIT_MAS | (1u << 10));
    wr(&c, DMAC_INT_EN_SET, 1u << 21);
    setup_rx(&c, &r, 0);                        /* PF_THRES 0 */
    qtest_writel(q, r.rx_ring, 1536);           /* desc 0: OWN clear */
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_no_desc_stalls", 1));
    g_assert_cmphex(rd(&c, DMAC_RX_ERR_STS(0)), ==, 1u << 6);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 21), ==, 1u << 21);
    g_assert_cmphex(rd(&c, INT_STS) & (1u << 10), ==, 1u << 10);
    g_assert_cmphex(msix_seen(&c, 4), ==, 0x104);
    g_assert_cmphex(rd(&c, DMAC_CMD) & 0x11, ==, 0x01);     /* stopped */
    g_assert_cmpint(desc_err(&c, "rx-own"), ==, 1);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    g_assert_cmpint(cnt_arr(&c, "rx_fifo_queued", 0), ==, 1);

    /* prefetch: descriptor 3 of the PF_THRES window is not handed over */
    wr(&c, DMAC_RX_ERR_STS(0), 0xFF);
    wr(&c, INT_STS, 1u << 10);
    qtest_writel(q, r.rx_ring, RX_OWN | 1536);
    qtest_writel(q, r.rx_ring + 16 * 3, 1536);
    wr(&c, RX_CFG_A(0), (16u << 16) | (1u << 5));
    wr(&c, DMAC_CMD, 1u << 4);                  /* START_R(0) */
    g_assert_cmphex(rd(&c, DMAC_RX_ERR_STS(0)), ==, 1u << 6);
    g_assert_cmphex(rd(&c, DMAC_CMD) & 0x11, ==, 0x01);
    g_assert_cmpint(desc_err(&c, "rx-own"), ==, 2);
    g_assert_cmpint(cnt(&c, "desc_errors"), ==, 2);
    /* a tail write that leaves it outside the window: fine */
    wr(&c, DMAC_RX_ERR_STS(0), 0xFF);
    wr(&c, RX_TAIL(0), 3);
    wr(&c, DMAC_CMD, 1u << 4);
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));   /* the held frame */
    g_assert_cmphex(rd(&c, DMAC_RX_ERR_STS(0)), ==, 0);
    g_assert_cmpint(cnt(&c, "desc_errors"), ==, 2);
    ctx_fini(&c);
}

/* TX: LS without FS, FS again before LS, empty buffer, EXT sequencing */
static void tx_seq_case(uint32_t d0a, uint32_t d0b, uint32_t bit,
                        const char *kind)
{
    Ctx c;
    TxRing t;
    QTestState *q;

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_tx(&c, &t);
    tx_desc(&c, &t, 0, 100, 0);
    tx_desc(&c, &t, 1, 100, 0);
    qtest_writel(q, t.ring, d0a);
    qtest_writel(q, t.ring + 16, d0b);
    wr(&c, TX_TAIL(0), 2);                      /* fetched at the write */
    g_assert_cmphex(rd(&c, DMAC_TX_ERR_STS(0)), ==, bit);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 21), ==, 1u << 21);
    g_assert_cmphex(rd(&c, DMAC_CMD) & (0x11u << 16), ==, 1u << 16);
    g_assert_cmpint(desc_err(&c, kind), ==, 1);
    g_assert_cmpint(cnt(&c, "desc_errors"), ==, 1);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 0);
    g_assert_cmpint(rd(&c, TX_HEAD(0)), ==, 0);
    ctx_fini(&c);
}

#define TXD_FS  (1u << 29)
#define TXD_LS  (1u << 28)
#define TXD_EXT (1u << 27)
#define TXD_DTYPE_EXT (1u << 30)

static void test_desc_tx_seq(void)
{
    tx_seq_case(TXD_LS | 100, TXD_FS | TXD_LS | 100, 1u << 0, "tx-nofs");
    tx_seq_case(TXD_FS | 100, TXD_FS | TXD_LS | 100, 1u << 1, "tx-extrafs");
    tx_seq_case(TXD_FS | 100, TXD_LS | 0, 1u << 6, "tx-len");
    tx_seq_case(TXD_FS | TXD_EXT | 100, TXD_LS | 100, 1u << 2,
                "tx-ext-missing");
    tx_seq_case(TXD_FS | 100, TXD_DTYPE_EXT, 1u << 3, "tx-data-missing");
}

/*
 * Correct rings raise no descriptor error: RX with PF_THRES 16 over
 * several tail writes, and TX in the driver's layouts (single, multi
 * descriptor, TSO with the extension after LS).
 */
static void test_desc_clean(void)
{
    Ctx c;
    Rings r;
    TxRing t;
    uint8_t f[100];
    QTestState *q;
    int i;

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx(&c, &r, 0);
    wr(&c, RX_CFG_A(0), (16u << 16) | (1u << 5));
    make_frame(f, sizeof(f));
    for (i = 0; i < 12; i++) {
        send_frame(&c, f, sizeof(f));
        g_assert_true(wait_hwb(&c, r.rx_hwb, (i + 1) % RING));
        qtest_writel(q, r.rx_ring + 16 * i % (16 * RING), RX_OWN | 1536);
        wr(&c, RX_TAIL(0), i % RING);
    }
    setup_tx(&c, &t);
    tx_desc(&c, &t, 0, 100, 0);                 /* FS|LS */
    tx_desc(&c, &t, 1, 60, 0);
    qtest_writel(q, t.ring + 16, TXD_FS | 60);  /* FS ... */
    tx_desc(&c, &t, 2, 40, 0);
    qtest_writel(q, t.ring + 32, TXD_LS | 40);  /* ... LS */
    wr(&c, TX_TAIL(0), 3);
    g_assert_true(wait_hwb(&c, t.hwb, 3));
    drain_sock(&c, 2);
    g_assert_cmpint(cnt(&c, "desc_errors"), ==, 0);
    g_assert_cmphex(rd(&c, DMAC_RX_ERR_STS(0)), ==, 0);
    g_assert_cmphex(rd(&c, DMAC_TX_ERR_STS(0)), ==, 0);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 21), ==, 0);
    ctx_fini(&c);
}

static int64_t quirk_applied(Ctx *c, const char *q)
{
    return cnt_sub(c, "quirk_applied", q);
}

/*
 * quirk-extra-buffer: a 100-byte frame that fits one buffer takes two
 * descriptors; the first has FS and no LS, the second LS and the length
 * (104, FCS included) and no data; the next frame follows them.
 */
static void test_quirk_extra_buffer(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];
    QTestState *q;

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx(&c, &r, 0);
    g_assert_cmpint(prop_get(&c, "quirk-extra-buffer"), ==, 0);
    prop_set(&c, "quirk-extra-buffer", 1);
    qtest_writel(q, r.rx_buf[1], 0x5a5a5a5a);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    g_assert_cmphex(rx_d0(&c, &r, 0), ==, RX_FS | 1536);
    g_assert_cmphex(rx_d0(&c, &r, 1), ==, RX_LS | (104u << 16) | 1536);
    g_assert_cmphex(qtest_readl(q, r.rx_buf[1]), ==, 0x5a5a5a5a);
    g_assert_cmpint(quirk_applied(&c, "extra-buffer"), ==, 1);
    /* every 2nd frame: the next one is plain */
    prop_set(&c, "quirk-extra-buffer", 2);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 3));
    g_assert_cmphex(rx_d0(&c, &r, 2), ==, RX_FS | RX_LS | (104u << 16) | 1536);
    g_assert_cmpint(cnt(&c, "desc_errors"), ==, 0);
    ctx_fini(&c);
}

/*
 * quirk-status-every-desc: a 1200-byte frame over three 512-byte buffers
 * gets its status (ICSM: no offload) in data1 of all three descriptors,
 * where the driver keeps the buffer address; without it only on LS.
 */
static void test_quirk_status_every_desc(void)
{
    Ctx c;
    Rings r;
    uint8_t f[1200];
    QTestState *q;
    int i;

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx_len(&c, &r, 0, 512);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 3));
    g_assert_cmphex(qtest_readl(q, r.rx_ring + 4), ==,
                    r.rx_buf[0] & 0xFFFFFFFF);
    g_assert_cmphex(qtest_readl(q, r.rx_ring + 2 * 16 + 4), ==, 1);
    prop_set(&c, "quirk-status-every-desc", 1);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 6));
    for (i = 3; i < 6; i++) {
        g_assert_cmphex(qtest_readl(q, r.rx_ring + 16 * i + 4), ==, 1);
        g_assert_cmphex(qtest_readl(q, r.rx_ring + 16 * i + 8), ==,
                        r.rx_buf[i] >> 32);
    }
    g_assert_cmphex(rx_d0(&c, &r, 3) & (RX_FS | RX_LS), ==, RX_FS);
    g_assert_cmpint(quirk_applied(&c, "status-every-desc"), ==, 1);
    ctx_fini(&c);
}

/*
 * quirk-hash-store: with RFE_RSS_CFG RSS_ENABLE | RSS_HASH_STORE | IPV4
 * the RSS hash of an IPv4 frame goes over data2 and data3 of its LS
 * descriptor; a non-IP frame (no hash) and the quirk off leave them.
 */
static void test_quirk_hash_store(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];
    QTestState *q;
    uint32_t h;
    int i;

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx(&c, &r, 0);
    for (i = 0; i < 10; i++) {
        wr(&c, 0x558 + 4 * i, 0x6d5a56da + i * 0x01010101);  /* HASH_KEY */
    }
    wr(&c, RFE_RSS_CFG, (1u << 8) | (1u << 1) | 1u);
    build_ipv4_udp(f, sizeof(f), true);
    send_frame(&c, f, sizeof(f));               /* quirk off */
    g_assert_true(wait_hwb(&c, r.rx_hwb, 1));
    g_assert_cmphex(qtest_readl(q, r.rx_ring + 8), ==, r.rx_buf[0] >> 32);
    g_assert_cmphex(qtest_readl(q, r.rx_ring + 12), ==, 0);
    prop_set(&c, "quirk-hash-store", 1);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 2));
    h = qtest_readl(q, r.rx_ring + 16 + 8);
    g_assert_cmphex(h, !=, r.rx_buf[1] >> 32);
    g_assert_cmphex(qtest_readl(q, r.rx_ring + 16 + 12), ==, h);
    make_frame(f, sizeof(f));                   /* not IP: no hash */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 3));
    g_assert_cmphex(qtest_readl(q, r.rx_ring + 32 + 8), ==,
                    r.rx_buf[2] >> 32);
    g_assert_cmpint(quirk_applied(&c, "hash-store"), ==, 1);
    /* the hash of the same flow is the same */
    build_ipv4_udp(f, sizeof(f), true);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 4));
    g_assert_cmphex(qtest_readl(q, r.rx_ring + 48 + 8), ==, h);
    ctx_fini(&c);
}

/*
 * Batched write-back (rx-wb-batch=1, the default): RX_CFG_A WB_THRES 3 + WB_ON_INT_TMR,
 * moderation 100 us: two frames stay unwritten (OWN, no head write-back,
 * no RXFRM), the third writes back all three; a lone frame is written back
 * when the interval has elapsed; WB_SWFLUSH writes back at once.
 */
static void test_rx_wb_batch(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];
    QTestState *q;

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx(&c, &r, 0);
    g_assert_cmpint(prop_get(&c, "rx-wb-batch"), ==, 1);     /* default */
    wr(&c, INT_MOD_CFG0, 100);                  /* 100 us, all sources */
    wr(&c, RX_CFG_A(0), (1u << 30) | (3u << 24) | (1u << 5));
    make_frame(f, sizeof(f));

    send_frame(&c, f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_frames", 2));
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 0xdead);
    g_assert_cmphex(rx_d0(&c, &r, 0), ==, RX_OWN | 1536);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 16), ==, 0);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 3));
    g_assert_cmphex(rx_d0(&c, &r, 0) & (RX_OWN | RX_FS | RX_LS), ==,
                    RX_FS | RX_LS);
    g_assert_cmphex(rx_d0(&c, &r, 2) & RX_OWN, ==, 0);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 16), ==, 1u << 16);
    g_assert_cmpint(cnt_sub(&c, "rx_wb_flush_why", "threshold"), ==, 1);

    /* a lone frame: written back when the interrupt timer expires */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_frames", 4));
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 3);
    qtest_clock_step(q, 99 * 1000);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 3);
    qtest_clock_step(q, 1000);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 4);
    g_assert_cmpint(cnt_sub(&c, "rx_wb_flush_why", "timer"), ==, 1);

    /* software flush */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_frames", 5));
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 4);
    wr(&c, RX_CFG_A(0), rd(&c, RX_CFG_A(0)) | (1u << 31));
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 5);
    g_assert_cmphex(rd(&c, RX_CFG_A(0)) >> 31, ==, 0);
    g_assert_cmpint(cnt_arr(&c, "rx_wb_flushes", 0), ==, 3);
    g_assert_cmpint(cnt(&c, "rx_wb_batched_desc"), ==, 5);
    ctx_fini(&c);
}

/* ---- completion driven by traffic, write-back as programmed ---- */

/* a 9018-byte frame (FCS included) takes 72.304 us at 1 Gbit/s */
#define JUMBO_LEN           9014
#define WIRE_NS_JUMBO       ((JUMBO_LEN + 4 + 8 + 12) * 8)

/* the RX side of (setup_rx) for 9018-byte frames, paced without burst */
static void setup_rx_jumbo(Ctx *c, Rings *r)
{
    setup_rx(c, r, 0);
    wr(c, MAC_RX, (rd(c, MAC_RX) & 0xFFFF) | (9018u << 16));
    prop_set(c, "rate-burst-us", 0);
    prop_set(c, "rate-catchup-us", 0);
}

/*
 * MAC RX/TX disable with nothing on the wire: RXD/TXD are set within the
 * write, before the driver's first read and before any clock step.
 */
static void test_mac_disable_idle(void)
{
    Ctx c;
    Rings r;
    TxRing t;

    ctx_init(&c, false);
    setup_rx(&c, &r, 0);
    setup_tx(&c, &t);
    wr(&c, MAC_RX, rd(&c, MAC_RX) & ~1u);
    g_assert_cmphex(rd(&c, MAC_RX) & 2, ==, 2);
    wr(&c, MAC_TX, rd(&c, MAC_TX) & ~1u);
    g_assert_cmphex(rd(&c, MAC_TX) & 2, ==, 2);
    g_assert_cmpint(cnt_sub(&c, "async_busy_reads", "mac-disable"), ==, 0);
    g_assert_cmpint(cnt_sub(&c, "async_wait_max_ns", "mac-disable"), ==, 0);
    ctx_fini(&c);
}

/*
 * MAC RX disable 30 us into a 9018-byte frame (72.304 us on the wire at
 * 1 Gbit/s): RXD is set when its last bit has come off, the frame is still
 * received; the next frame is not.  MAC TX disable while a 1514-byte frame
 * goes out: TXD when it has left the wire, the frame is sent.
 */
static void test_mac_disable_frame(void)
{
    Ctx c;
    Rings r;
    TxRing t;
    QTestState *q;
    static uint8_t f[JUMBO_LEN];

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx_jumbo(&c, &r);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_pace_holds", 1));    /* on the wire */
    qtest_clock_step(q, 30 * 1000);             /* 42.304 us to go */
    wr(&c, MAC_RX, rd(&c, MAC_RX) & ~1u);
    g_assert_cmphex(rd(&c, MAC_RX) & 2, ==, 0);
    qtest_clock_step(q, WIRE_NS_JUMBO - 30 * 1000 - 1);
    g_assert_cmphex(rd(&c, MAC_RX) & 2, ==, 0);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    qtest_clock_step(q, 1);
    g_assert_cmphex(rd(&c, MAC_RX) & 2, ==, 2);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 1);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 6);
    g_assert_cmpint(cnt_sub(&c, "async_wait_max_ns", "mac-disable"), ==,
                    WIRE_NS_JUMBO - 30 * 1000);
    send_frame(&c, f, 100);                     /* receiver now off */
    g_assert_true(wait_cnt(&c, "rx_drop_disabled", 1));

    /* TX: 1514 bytes take 12.304 us */
    setup_tx(&c, &t);
    tx_desc(&c, &t, 0, 1514, 0);
    wr(&c, TX_TAIL(0), 1);
    g_assert_cmpint(cnt(&c, "tx_pace_holds"), ==, 1);
    wr(&c, MAC_TX, rd(&c, MAC_TX) & ~1u);
    g_assert_cmphex(rd(&c, MAC_TX) & 2, ==, 0);
    qtest_clock_step(q, 12304 - 1);
    g_assert_cmphex(rd(&c, MAC_TX) & 2, ==, 0);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 0);
    qtest_clock_step(q, 1);
    g_assert_cmphex(rd(&c, MAC_TX) & 2, ==, 2);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 1);
    drain_sock(&c, 1);
    /* the fixed part comes on top: mac-disable-us */
    prop_set(&c, "mac-disable-us", 20);
    wr(&c, MAC_RX, rd(&c, MAC_RX) | 1);
    wr(&c, MAC_RX, rd(&c, MAC_RX) & ~1u);
    g_assert_cmphex(rd(&c, MAC_RX) & 2, ==, 0);
    qtest_clock_step(q, 20 * 1000);
    g_assert_cmphex(rd(&c, MAC_RX) & 2, ==, 2);
    ctx_fini(&c);
}

/*
 * DMA stop: at once (within the write) when the channel is idle; with a
 * 9018-byte frame for the channel on the wire, STOP_PENDING until the
 * frame has come off the wire and been written back.
 */
static void test_dma_stop_frame(void)
{
    Ctx c;
    Rings r;
    QTestState *q;
    static uint8_t f[JUMBO_LEN];

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx_jumbo(&c, &r);
    wr(&c, DMAC_CMD, 1u << 0);                  /* STOP_R(0), idle */
    g_assert_cmphex(rd(&c, DMAC_CMD) & 0x11, ==, 0x01);  /* STOPPED */
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 12), ==, 1u << 12);
    g_assert_cmpint(cnt_sub(&c, "async_busy_reads", "dma-stop"), ==, 0);
    wr(&c, DMAC_INT_STS, 1u << 12);
    wr(&c, DMAC_CMD, 1u << 4);                  /* START_R(0) */

    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_pace_holds", 1));
    wr(&c, DMAC_CMD, 1u << 0);
    g_assert_cmphex(rd(&c, DMAC_CMD) & 0x11, ==, 0x11);  /* STOP_PENDING */
    qtest_clock_step(q, WIRE_NS_JUMBO - 1);
    g_assert_cmphex(rd(&c, DMAC_CMD) & 0x11, ==, 0x11);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 0xdead);
    qtest_clock_step(q, 1);
    g_assert_cmphex(rd(&c, DMAC_CMD) & 0x11, ==, 0x01);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 12), ==, 1u << 12);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 6);   /* written back */
    g_assert_cmphex(rx_d0(&c, &r, 5) & (RX_OWN | RX_LS), ==, RX_LS);
    g_assert_cmpint(cnt_sub(&c, "async_wait_max_ns", "dma-stop"), ==,
                    WIRE_NS_JUMBO);
    ctx_fini(&c);
}

/* RX_CFG_A as lan743x_rx_enable() writes it: WB_ON_INT_TMR, WB_THRES 7,
 * PF_THRES 16, PF_PRI_THRES 4, HP_WB_EN; INT_MOD_CFG0 400 as the driver */
#define DRV_RX_CFG_A ((1u << 30) | (7u << 24) | (16u << 16) | (4u << 8) | \
                      (1u << 5))
#define DRV_TX_CFG_A ((1u << 30) | (1u << 28) | (16u << 16) | (4u << 8) | \
                      (1u << 5) | 7u)

static void setup_rx_drv(Ctx *c, Rings *r)
{
    setup_rx(c, r, 0);
    wr(c, INT_MOD_CFG0, 400);
    wr(c, RX_CFG_A(0), DRV_RX_CFG_A);
}

/*
 * Default: RX write-back as the driver programs it: six frames stay
 * unwritten (OWN, no head write-back, no RXFRM), the seventh writes back
 * all seven; a lone frame is written back when the 400 us timer expires.
 */
static void test_wb_default_rx(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];
    QTestState *q;
    int i;

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx_drv(&c, &r);
    make_frame(f, sizeof(f));
    for (i = 0; i < 6; i++) {
        send_frame(&c, f, sizeof(f));
    }
    g_assert_true(wait_cnt(&c, "rx_frames", 6));
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 0xdead);
    g_assert_cmphex(rx_d0(&c, &r, 0), ==, RX_OWN | 1536);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 16), ==, 0);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_hwb(&c, r.rx_hwb, 7));
    g_assert_cmphex(rx_d0(&c, &r, 6) & (RX_OWN | RX_LS), ==, RX_LS);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & (1u << 16), ==, 1u << 16);
    g_assert_cmpint(cnt_sub(&c, "rx_wb_flush_why", "threshold"), ==, 1);
    wr(&c, RX_TAIL(0), 0);                      /* descriptor 7 */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_frames", 8));
    qtest_clock_step(q, 399 * 1000);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 7);
    qtest_clock_step(q, 1000);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 0);
    g_assert_cmpint(cnt_sub(&c, "rx_wb_flush_why", "timer"), ==, 1);
    g_assert_cmpint(cnt(&c, "wb_freed_ring_writes"), ==, 0);
    ctx_fini(&c);
}

/*
 * WB_ON_INT_TMR with the driver's ABS moderation: the write-back timer is
 * the interrupt timer, started by the batch's first frame.  A lone frame is
 * written back and signalled together when it expires (400 us), not a
 * second interval after its write-back.
 */
static void test_wb_timer_irq(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];
    QTestState *q;

    ctx_init(&c, true);
    q = c.qs->qts;
    wr(&c, INT_VEC_MAP0, 2);                    /* RX0 -> vector 2 */
    wr(&c, INT_VEC_EN_SET, 1u << 2);
    wr(&c, INT_EN_SET, INT_BIT_MAS | INT_BIT_RX0);
    setup_rx_drv(&c, &r);                       /* INT_MOD_CFG0 400 */
    qtest_clock_step(q, 1000 * 1000);           /* idle for a while */
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_frames", 1));
    qtest_clock_step(q, 399 * 1000);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 0xdead);
    g_assert_cmphex(msix_seen(&c, 2), ==, 0);
    qtest_clock_step(q, 1000);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 1);
    g_assert_cmphex(msix_seen(&c, 2), ==, 0x102);
    g_assert_cmpint(cnt_arr(&c, "irq_per_vector", 2), ==, 1);
    ctx_fini(&c);
}

/*
 * Default: TX head write-back (and TX_IOC) per HP_WB_THRES 7: six frames
 * go out without head write-back or IOC, the seventh writes the head;
 * one more is written back when the interrupt timer (100 us) expires.
 * tx-wb-batch=0: after every fetch, as the older model.
 */
static void test_wb_default_tx(void)
{
    Ctx c;
    TxRing t;
    QTestState *q;
    int i;

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_tx(&c, &t);
    wr(&c, INT_MOD_CFG0, 100);
    wr(&c, TX_CFG_A(0), DRV_TX_CFG_A);
    for (i = 0; i < 6; i++) {
        tx_desc(&c, &t, i, 100, 1u << 26);      /* IOC */
    }
    wr(&c, TX_TAIL(0), 6);
    drain_sock(&c, 6);
    g_assert_cmpint(rd(&c, TX_HEAD(0)), ==, 6);
    g_assert_cmphex(qtest_readl(q, t.hwb), ==, 0xdead);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & 1, ==, 0);
    tx_desc(&c, &t, 6, 100, 1u << 26);
    wr(&c, TX_TAIL(0), 7);
    drain_sock(&c, 1);
    g_assert_cmphex(qtest_readl(q, t.hwb), ==, 7);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & 1, ==, 1);
    wr(&c, DMAC_INT_STS, 1);
    tx_desc(&c, &t, 7, 100, 1u << 26);
    wr(&c, TX_TAIL(0), 0);
    drain_sock(&c, 1);
    qtest_clock_step(q, 99 * 1000);
    g_assert_cmphex(qtest_readl(q, t.hwb), ==, 7);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & 1, ==, 0);
    qtest_clock_step(q, 1000);
    g_assert_cmphex(qtest_readl(q, t.hwb), ==, 0);
    g_assert_cmphex(rd(&c, DMAC_INT_STS) & 1, ==, 1);
    g_assert_cmpint(cnt(&c, "tx_wb_flushes"), ==, 2);
    g_assert_cmpint(cnt(&c, "tx_head_writebacks"), ==, 2);
    /* the older model: every fetch */
    prop_set(&c, "tx-wb-batch", 0);
    tx_desc(&c, &t, 0, 100, 1u << 26);
    wr(&c, TX_TAIL(0), 1);
    drain_sock(&c, 1);
    g_assert_cmphex(qtest_readl(q, t.hwb), ==, 1);
    ctx_fini(&c);
}

/*
 * wb-at-stop=1 (default): write-backs pending when the stop completes are
 * written after it, at the write-back timer; wb-at-stop=0: at the stop.
 */
static void test_wb_at_stop(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];
    QTestState *q;
    int i;

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx_drv(&c, &r);
    g_assert_cmpint(prop_get(&c, "wb-at-stop"), ==, 1);
    make_frame(f, sizeof(f));
    for (i = 0; i < 3; i++) {
        send_frame(&c, f, sizeof(f));
    }
    g_assert_true(wait_cnt(&c, "rx_frames", 3));
    wr(&c, DMAC_CMD, 1u << 0);                  /* STOP_R(0) */
    g_assert_cmphex(rd(&c, DMAC_CMD) & 0x11, ==, 0x01);  /* stopped */
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 0xdead);
    g_assert_cmphex(rx_d0(&c, &r, 0), ==, RX_OWN | 1536);
    qtest_clock_step(q, 399 * 1000);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 0xdead);
    qtest_clock_step(q, 1000);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 3);   /* late */
    g_assert_cmphex(rx_d0(&c, &r, 2) & RX_OWN, ==, 0);
    g_assert_cmpint(cnt(&c, "wb_late_writes"), ==, 1);
    g_assert_cmpint(cnt(&c, "wb_freed_ring_writes"), ==, 0);

    /* wb-at-stop=0: flushed when the stop completes */
    prop_set(&c, "wb-at-stop", 0);
    wr(&c, DMAC_CMD, 1u << 4);                  /* START_R(0) */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_frames", 4));
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 3);
    wr(&c, DMAC_CMD, 1u << 0);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 4);
    g_assert_cmpint(cnt_sub(&c, "rx_wb_flush_why", "stop"), ==, 1);
    g_assert_cmpint(cnt(&c, "wb_late_writes"), ==, 1);
    ctx_fini(&c);
}

/*
 * A write-back pending across a reprogramming of the ring (base address
 * written after the stop, as a driver does for a new ring) is written to
 * the old ring (the addresses it was queued with) and counted in
 * wb_freed_ring_writes; a channel reset discards it instead.
 */
static void test_wb_freed_ring(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];
    QTestState *q;
    uint64_t ring2;

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx_drv(&c, &r);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_frames", 2));
    wr(&c, DMAC_CMD, 1u << 0);                  /* STOP_R(0): late wb */
    ring2 = guest_alloc(&c.qs->alloc, RING * 16);
    wr(&c, RX_BASE_ADDRL(0), ring2 & 0xFFFFFFFF);
    wr(&c, RX_BASE_ADDRH(0), ring2 >> 32);
    g_assert_cmpint(cnt(&c, "wb_freed_ring_writes"), ==, 0);
    qtest_clock_step(q, 400 * 1000);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 2);   /* old address */
    g_assert_cmphex(rx_d0(&c, &r, 1) & RX_OWN, ==, 0);  /* old ring */
    g_assert_cmpint(cnt(&c, "wb_freed_ring_writes"), ==, 1);

    /* a channel reset discards what is pending: nothing written */
    wr(&c, RX_BASE_ADDRL(0), r.rx_ring & 0xFFFFFFFF);
    wr(&c, RX_BASE_ADDRH(0), r.rx_ring >> 32);
    qtest_writel(q, r.rx_ring + 16 * 2, RX_OWN | 1536);
    wr(&c, DMAC_CMD, 1u << 4);                  /* START_R(0), as a driver:
                                                 * ring first, it prefetches */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_frames", 3));
    wr(&c, DMAC_CMD, 1u << 8);                  /* RX_SWR(0) */
    qtest_clock_step(q, 400 * 1000);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 2);
    g_assert_cmphex(rx_d0(&c, &r, 2), ==, RX_OWN | 1536);
    g_assert_cmpint(cnt(&c, "wb_discarded"), ==, 1);
    g_assert_cmpint(cnt(&c, "wb_freed_ring_writes"), ==, 1);
    ctx_fini(&c);
}

/* ---- DMA that takes time, unknowns as ranges ---- */

/*
 * The tests below set a property to a value and assert what it does.
 * With LAN7430_QTEST_OLD_VALUES=1 in the environment each sets the
 * property's old value (the older model's behaviour) instead, with the
 * same assertions: they then fail, which shows they test the property.
 */
static uint32_t nv(uint32_t v, uint32_t old)
{
    return getenv("LAN7430_QTEST_OLD_VALUES") ? old : v;
}

#define DMAC_CFG            0xC00
#define DMAC_COAL_CFG       0xC04
#define STAT_TX_UC_BYTES    0x12A0

/* wait (real time) until element idx of counter array key reaches want */
static bool wait_cnt_arr(Ctx *c, const char *key, int idx, int64_t want)
{
    int i;

    for (i = 0; i < 2000; i++) {
        if (cnt_arr(c, key, idx) >= want) {
            return true;
        }
        g_usleep(1000);
    }
    return false;
}

/* a qom-set that must be refused */
static void prop_set_bad(Ctx *c, const char *prop, uint32_t val)
{
    QDict *rsp = qtest_qmp(c->qs->qts, "{'execute': 'qom-set', 'arguments':"
                           " {'path': %s, 'property': %s, 'value': %u}}",
                           DUT_PATH, prop, val);
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
}

/*
 * desc-fetch-ns: an RX or TX tail write is acted on that long after it
 * (virtual time); the register reads back the new value at once.
 */
static void test_desc_fetch_latency(void)
{
    Ctx c;
    Rings r;
    TxRing t;
    QTestState *q;
    uint8_t f[100];

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx(&c, &r, 0);
    wr(&c, RX_TAIL(0), 0);                      /* no descriptor */
    prop_set(&c, "desc-fetch-ns", nv(2000, 0));
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt_arr(&c, "rx_fifo_queued", 0, 1));
    wr(&c, RX_TAIL(0), 1);
    g_assert_cmpint(rd(&c, RX_TAIL(0)), ==, 1);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    qtest_clock_step(q, 1999);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    qtest_clock_step(q, 1);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 1);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 1);

    setup_tx(&c, &t);
    tx_desc(&c, &t, 0, 100, 0);
    wr(&c, TX_TAIL(0), 1);
    g_assert_cmpint(rd(&c, TX_TAIL(0)), ==, 1);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 0);
    qtest_clock_step(q, 1999);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 0);
    qtest_clock_step(q, 1);
    g_assert_cmpint(cnt(&c, "tx_frames"), ==, 1);
    drain_sock(&c, 1);
    g_assert_cmpint(cnt(&c, "desc_fetch_delayed"), ==, 2);
    prop_set_bad(&c, "desc-fetch-ns", 2001);
    ctx_fini(&c);
}

/*
 * dma-rate: 996-byte frames (1000 with the FCS) at 250 bytes/us take
 * 4 us each over the link, one after the other; each is in the ring
 * (head write-back) when its DMA has completed.
 */
static void test_dma_rate(void)
{
    Ctx c;
    Rings r;
    QTestState *q;
    uint8_t f[996];

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx(&c, &r, 0);
    prop_set(&c, "dma-rate", nv(250, 0));
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt_arr(&c, "rx_fifo_queued", 0, 2));
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    qtest_clock_step(q, 3999);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 0xdead);
    qtest_clock_step(q, 1);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 1);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 1);
    qtest_clock_step(q, 3999);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 1);
    qtest_clock_step(q, 1);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 2);
    g_assert_cmpint(cnt(&c, "rx_dma_timed_frames"), ==, 2);
    g_assert_cmpint(cnt(&c, "rx_dma_wait_max_ns"), ==, 4000);
    prop_set_bad(&c, "dma-rate", 10);
    prop_set_bad(&c, "dma-rate", 4001);
    ctx_fini(&c);
}

/*
 * wb-latency-ns: the descriptor write-back lands that long after the
 * data; with dma-rate too, the channel's next frame waits for it.
 */
static void test_wb_latency(void)
{
    Ctx c;
    Rings r;
    QTestState *q;
    uint8_t f[996];

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx(&c, &r, 0);
    prop_set(&c, "wb-latency-ns", nv(500, 0));
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt_arr(&c, "rx_fifo_queued", 0, 1));
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    qtest_clock_step(q, 499);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    qtest_clock_step(q, 1);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 1);

    prop_set(&c, "dma-rate", 250);              /* 4 us + 0.5 us each */
    send_frame(&c, f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt_arr(&c, "rx_fifo_queued", 0, 3));
    qtest_clock_step(q, 4499);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 1);
    qtest_clock_step(q, 1);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 2);
    qtest_clock_step(q, 4499);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 2);
    qtest_clock_step(q, 1);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 3);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 3);
    prop_set_bad(&c, "wb-latency-ns", 2001);
    ctx_fini(&c);
}

/*
 * dma-coal: DMAC_CFG.COAL_EN and DMAC_COAL_CFG as the driver programs
 * them (TIMER_LIMIT 1, RX_THRES 12, CSR and interrupt exit): a frame
 * arriving while the device coalesces stays in the FIFO until the timer
 * (1 x dma-coal-timer-unit-us), the threshold (12 x dma-coal-thres-unit
 * bytes) or a CSR access.  No MMIO access while a frame is held: the
 * counters are read over QMP, the ring from guest memory.
 */
static void test_dma_coal(void)
{
    Ctx c;
    Rings r;
    QTestState *q;
    uint8_t f[996];

    ctx_init(&c, false);
    q = c.qs->qts;
    setup_rx(&c, &r, 0);
    wr(&c, DMAC_CFG, 1u << 16);                 /* COAL_EN */
    wr(&c, DMAC_COAL_CFG, (1u << 20) | (1u << 19) | (1u << 18) | (1u << 17) |
       (1u << 16) | (0x0A << 8) | 0x0C);
    prop_set(&c, "dma-coal", nv(1, 0));
    prop_set(&c, "dma-coal-timer-unit-us", 100);
    prop_set(&c, "dma-coal-thres-unit", 2048);
    make_frame(f, sizeof(f));

    /* the timer: 100 us after the frame came */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt_arr(&c, "rx_fifo_queued", 0, 1));
    g_assert_cmpint(cnt(&c, "dma_coal_holds"), ==, 1);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    qtest_clock_step(q, 100 * 1000 - 1);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 0);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 0xdead);
    qtest_clock_step(q, 1);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 1);
    g_assert_cmphex(qtest_readl(q, r.rx_hwb), ==, 1);
    g_assert_cmpint(cnt_sub(&c, "dma_coal_exit_why", "timer"), ==, 1);

    /* a CSR access */
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "dma_coal_holds", 2));
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 1);
    rd(&c, ID_REV);
    g_assert_cmpint(cnt(&c, "rx_frames"), ==, 2);
    g_assert_cmpint(cnt_sub(&c, "dma_coal_exit_why", "csr"), ==, 1);

    /* the threshold: 12 x 64 = 768 bytes, reached by one 1000-byte frame */
    prop_set(&c, "dma-coal-thres-unit", 64);
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_frames", 3));
    g_assert_cmpint(cnt(&c, "dma_coal_holds"), ==, 3);
    g_assert_cmpint(cnt_sub(&c, "dma_coal_exit_why", "threshold"), ==, 1);
    prop_set_bad(&c, "dma-coal-thres-unit", 32);
    prop_set_bad(&c, "dma-coal-timer-unit-us", 0);
    prop_set_bad(&c, "dma-coal", 2);
    ctx_fini(&c);
}

/*
 * stats-counter-bits=20: the frame counters wrap at 2^20, the byte
 * counters still at 2^32 (as the LAN78xx's); 24 is refused.
 */
static void test_stats_counter_bits(void)
{
    Ctx c;
    TxRing t;

    ctx_init(&c, false);
    setup_tx(&c, &t);
    prop_set(&c, "stats-counter-bits", nv(20, 32));
    prop_set(&c, "stat-preset", 0xFFFFF);
    tx_desc(&c, &t, 0, 100, (1u << 26) | (1u << 20));   /* IOC, TPE */
    wr(&c, TX_TAIL(0), 1);
    g_assert_true(wait_hwb(&c, t.hwb, 1));
    drain_sock(&c, 1);
    g_assert_cmphex(rd(&c, STAT_TX_TOTAL), ==, 0);
    g_assert_cmphex(rd(&c, STAT_TX_UC_BYTES), >, 0xFFFFF);
    /* a preset above the width reads masked */
    prop_set(&c, "stat-preset", 0xFFFFFFFFu);
    g_assert_cmphex(rd(&c, STAT_TX_TOTAL), ==, 0xFFFFF);
    g_assert_cmphex(rd(&c, STAT_TX_UC_BYTES), ==, 0xFFFFFFFFu);
    prop_set_bad(&c, "stats-counter-bits", 24);
    ctx_fini(&c);
}

/*
 * fse-lock: MAC_RX.FSE does not change while RXEN is set, nor in the
 * write that sets RXEN (AN2948, as the driver quotes it); it does with
 * the receiver off.
 */
static void test_fse_lock(void)
{
    Ctx c;

    ctx_init(&c, false);
    prop_set(&c, "fse-lock", nv(1, 0));
    wr(&c, MAC_RX, 1 | 4);                      /* RXEN and FSE at once */
    g_assert_cmphex(rd(&c, MAC_RX) & 5, ==, 1);
    wr(&c, MAC_RX, 0);                          /* off (idle: at once) */
    g_assert_cmphex(rd(&c, MAC_RX) & 2, ==, 2);
    wr(&c, MAC_RX, 4);                          /* FSE, receiver off */
    g_assert_cmphex(rd(&c, MAC_RX) & 4, ==, 4);
    wr(&c, MAC_RX, 1 | 4);
    wr(&c, MAC_RX, 1);                          /* clear FSE while on */
    g_assert_cmphex(rd(&c, MAC_RX) & 5, ==, 5);
    g_assert_cmpint(cnt(&c, "mac_fse_refused"), ==, 2);
    ctx_fini(&c);
}

/* pci-revision: the PCI revision ID; default the variant's (0x00) */
static void test_pci_revision(void)
{
    Ctx c;

    ctx_init(&c, false);
    g_assert_cmphex(qpci_config_readb(c.dev, PCI_REVISION_ID), ==, 0x00);
    ctx_fini(&c);
    ctx_init_dev(&c, false, nv(1, 0) ? "lan7430,pci-revision=16" :
                 "lan7430");
    g_assert_cmphex(qpci_config_readb(c.dev, PCI_REVISION_ID), ==, 0x10);
    ctx_fini(&c);
}

/*
 * strict-dma=on: a write-back after its channel's DMA stop completed,
 * into a ring reprogrammed since, is an error: counted, and the guest is
 * reported panicked (here -action panic=pause: the VM stops).
 */
static void test_strict_dma(void)
{
    Ctx c;
    Rings r;
    uint8_t f[100];
    QTestState *q;
    QDict *rsp, *ret;
    uint64_t ring2;

    ctx_init_args(&c, false, nv(1, 0) ? "lan7430,strict-dma=on" :
                  "lan7430", "-action panic=pause");
    q = c.qs->qts;
    setup_rx_drv(&c, &r);
    make_frame(f, sizeof(f));
    send_frame(&c, f, sizeof(f));
    g_assert_true(wait_cnt(&c, "rx_frames", 1));
    wr(&c, DMAC_CMD, 1u << 0);                  /* STOP_R(0): late wb */
    ring2 = guest_alloc(&c.qs->alloc, RING * 16);
    wr(&c, RX_BASE_ADDRL(0), ring2 & 0xFFFFFFFF);
    wr(&c, RX_BASE_ADDRH(0), ring2 >> 32);
    g_assert_cmpint(cnt(&c, "strict_dma_errors"), ==, 0);
    qtest_clock_step(q, 400 * 1000);
    g_assert_cmpint(cnt(&c, "wb_freed_ring_writes"), ==, 1);
    g_assert_cmpint(cnt(&c, "wb_late_writes"), ==, 1);
    g_assert_cmpint(cnt(&c, "strict_dma_errors"), ==, 2);
    g_assert_cmpint(cnt(&c, "strict_dma_failed"), ==, 1);
    rsp = qtest_qmp(q, "{'execute': 'query-status'}");
    ret = qdict_get_qdict(rsp, "return");
    g_assert_cmpstr(qdict_get_str(ret, "status"), ==, "guest-panicked");
    qobject_unref(rsp);
    ctx_fini(&c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("lan7430/reset-defaults", test_reset_defaults);
    qtest_add_func("lan7430/mdio-phy-id", test_mdio_phy_id);
    qtest_add_func("lan7430/variant-lan7430", test_variant_lan7430);
    qtest_add_func("lan7430/variant-lan7431", test_variant_lan7431);
    qtest_add_func("lan7430/variant-lan7431-phy-addr",
                   test_variant_lan7431_phy_addr);
    qtest_add_func("lan7430/variant-pci11010", test_variant_pci11010);
    qtest_add_func("lan7430/variant-pci11414", test_variant_pci11414);
    qtest_add_func("lan7430/pci11x1x-tx-ch3", test_pci11x1x_tx_ch3);
    qtest_add_func("lan7430/rx-roundtrip", test_rx_roundtrip);
    qtest_add_func("lan7430/tx-roundtrip", test_tx_roundtrip);
    qtest_add_func("lan7430/rx-multibuf", test_rx_multibuf);
    qtest_add_func("lan7430/tx-tso", test_tx_tso);
    qtest_add_func("lan7430/irq-auto-clear", test_irq_auto_clear);
    qtest_add_func("lan7430/msix-vector-map", test_msix_vector_map);
    qtest_add_func("lan7430/counters-rx", test_counters_rx);
    qtest_add_func("lan7430/counters-rx-no-desc", test_counters_rx_no_desc);
    qtest_add_func("lan7430/rx-fifo-hold", test_rx_fifo_hold);
    qtest_add_func("lan7430/counters-rx-csum", test_counters_rx_csum);
    qtest_add_func("lan7430/counters-tx", test_counters_tx);
    qtest_add_func("lan7430/stat-preset", test_stat_preset);
    qtest_add_func("lan7430/counters-irq-moderated",
                   test_counters_irq_moderated);
    qtest_add_func("lan7430/irq-mod-abs-batch", test_irq_mod_abs_batch);
    qtest_add_func("lan7430/irq-wb-delay-hist", test_irq_wb_delay_hist);
    qtest_add_func("lan7430/irq-int-mod-log", test_irq_int_mod_log);
    qtest_add_func("lan7430/irq-wb-delay-batched", test_irq_wb_delay_batched);
    qtest_add_func("lan7430/irq-mod-interval-bits",
                   test_irq_mod_interval_bits);
    qtest_add_func("lan7430/fault-rx-len", test_fault_rx_len);
    qtest_add_func("lan7430/fault-drop-fs-ls", test_fault_drop_fs_ls);
    qtest_add_func("lan7430/fault-ext-missing", test_fault_ext_missing);
    qtest_add_func("lan7430/fault-wb-delay", test_fault_wb_delay);
    qtest_add_func("lan7430/fault-rx-stall", test_fault_rx_stall);
    qtest_add_func("lan7430/fault-link-flap", test_fault_link_flap);
    qtest_add_func("lan7430/fault-spurious-irq", test_fault_spurious_irq);
    qtest_add_func("lan7430/rate-tx", test_rate_tx);
    qtest_add_func("lan7430/rate-rx", test_rate_rx);
    qtest_add_func("lan7430/rx-fifo-overflow", test_rx_fifo_overflow);
    qtest_add_func("lan7430/rx-fifo-off-ns", test_rx_fifo_off_ns);
    qtest_add_func("lan7430/rx-fifo-pause", test_rx_fifo_pause);
    qtest_add_func("lan7430/peer-ignores-pause", test_peer_ignores_pause);
    qtest_add_func("lan7430/peer-pause-time", test_peer_pause_time);
    qtest_add_func("lan7430/peer-pause-xon", test_peer_pause_xon);
    qtest_add_func("lan7430/peer-pause-lag", test_peer_pause_lag);
    qtest_add_func("lan7430/phy-lp-pause", test_phy_lp_pause);
    qtest_add_func("lan7430/rx-pause-frames", test_rx_pause_frames);
    qtest_add_func("lan7430/async-stop", test_async_stop);
    qtest_add_func("lan7430/desc-tail-check", test_desc_tail_check);
    qtest_add_func("lan7430/desc-rx-own", test_desc_rx_own);
    qtest_add_func("lan7430/desc-tx-seq", test_desc_tx_seq);
    qtest_add_func("lan7430/desc-clean", test_desc_clean);
    qtest_add_func("lan7430/quirk-extra-buffer", test_quirk_extra_buffer);
    qtest_add_func("lan7430/quirk-status-every-desc",
                   test_quirk_status_every_desc);
    qtest_add_func("lan7430/quirk-hash-store", test_quirk_hash_store);
    qtest_add_func("lan7430/rx-wb-batch", test_rx_wb_batch);
    qtest_add_func("lan7430/fault-rx-swr-head", test_fault_rx_swr_head);
    qtest_add_func("lan7430/fault-rx-irq-hold", test_fault_rx_irq_hold);
    qtest_add_func("lan7430/rx-swr-fifo-enabled", test_rx_swr_fifo_enabled);
    qtest_add_func("lan7430/mac-disable-idle", test_mac_disable_idle);
    qtest_add_func("lan7430/mac-disable-frame", test_mac_disable_frame);
    qtest_add_func("lan7430/dma-stop-frame", test_dma_stop_frame);
    qtest_add_func("lan7430/wb-default-rx", test_wb_default_rx);
    qtest_add_func("lan7430/exit-report", test_exit_report);
    qtest_add_func("lan7430/wb-timer-irq", test_wb_timer_irq);
    qtest_add_func("lan7430/wb-default-tx", test_wb_default_tx);
    qtest_add_func("lan7430/wb-at-stop", test_wb_at_stop);
    qtest_add_func("lan7430/wb-freed-ring", test_wb_freed_ring);
    qtest_add_func("lan7430/desc-fetch-latency", test_desc_fetch_latency);
    qtest_add_func("lan7430/dma-rate", test_dma_rate);
    qtest_add_func("lan7430/wb-latency", test_wb_latency);
    qtest_add_func("lan7430/dma-coal", test_dma_coal);
    qtest_add_func("lan7430/stats-counter-bits", test_stats_counter_bits);
    qtest_add_func("lan7430/fse-lock", test_fse_lock);
    qtest_add_func("lan7430/pci-revision", test_pci_revision);
    qtest_add_func("lan7430/strict-dma", test_strict_dma);
    return g_test_run();
}
