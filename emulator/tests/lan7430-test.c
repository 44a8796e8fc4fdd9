/*
 * QTest for the LAN7430 model
 *
 * register defaults after reset, MDIO read of the PHY ID, one RX and one TX
 * descriptor round trip with the expected write-back, interrupt auto-clear
 * and MSI-X vector mapping.
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

#define ID_REV              0x000
#define HW_CFG              0x010
#define PMT_CTL             0x014
#define E2P_CMD             0x040
#define FCT_RX_CTL          0x0AC
#define FCT_TX_CTL          0x0C4
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

#define MAC_STR             "52:54:00:74:30:01"

typedef struct Ctx {
    QOSState *qs;
    QPCIDevice *dev;
    QPCIBar bar;
    int sock[2];
    uint64_t msix_addr;         /* 8 vectors x 4 bytes of message data */
} Ctx;

static uint32_t rd(Ctx *c, uint32_t off)
{
    return qpci_io_readl(c->dev, c->bar, off);
}

static void wr(Ctx *c, uint32_t off, uint32_t val)
{
    qpci_io_writel(c->dev, c->bar, off, val);
}

static void ctx_init(Ctx *c, bool msix)
{
    int ret = socketpair(PF_UNIX, SOCK_STREAM, 0, c->sock);

    g_assert_cmpint(ret, !=, -1);
    c->qs = qtest_pc_boot("-netdev socket,fd=%d,id=hs0 "
                          "-device lan7430,netdev=hs0,mac=" MAC_STR
                          ",addr=04.0", c->sock[1]);
    c->dev = qpci_device_find(c->qs->pcibus, QPCI_DEVFN(4, 0));
    g_assert(c->dev);
    qpci_device_enable(c->dev);
    c->bar = qpci_iomap(c->dev, 0, NULL);
    if (msix) {
        int v;

        qpci_msix_enable(c->dev);
        c->msix_addr = guest_alloc(&c->qs->alloc, 64);
        for (v = 0; v < 8; v++) {
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

    /* DMAC soft reset self-clears */
    wr(&c, DMAC_CMD, 1u << 31);
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

/* ---- datapath helpers ---- */

#define RING 8

typedef struct Rings {
    uint64_t rx_ring, rx_hwb, rx_buf[RING];
    uint64_t tx_ring, tx_hwb, tx_buf;
} Rings;

static void setup_rx_len(Ctx *c, Rings *r, uint32_t cfg_c, uint32_t blen)
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
    wr(&c, INT_VEC_MAP2, 3);
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
    wr(&c, INT_VEC_MAP2, 5);
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
    ctx_fini(&c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("lan7430/reset-defaults", test_reset_defaults);
    qtest_add_func("lan7430/mdio-phy-id", test_mdio_phy_id);
    qtest_add_func("lan7430/rx-roundtrip", test_rx_roundtrip);
    qtest_add_func("lan7430/tx-roundtrip", test_tx_roundtrip);
    qtest_add_func("lan7430/rx-multibuf", test_rx_multibuf);
    qtest_add_func("lan7430/tx-tso", test_tx_tso);
    qtest_add_func("lan7430/irq-auto-clear", test_irq_auto_clear);
    qtest_add_func("lan7430/msix-vector-map", test_msix_vector_map);
    return g_test_run();
}
