/*
 * Microchip LAN7430 PCIe Gigabit Ethernet controller - register map
 *
 * Offsets and bit names follow the Linux lan743x driver (lan743x_main.h),
 * which is the specification this model is written against.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_NET_LAN7430_H
#define HW_NET_LAN7430_H

#define L7_CSR_SIZE             0x2000      /* LAN7430/7431 BAR 0 */
#define L7_CSR_SPACE            0x10000     /* largest BAR 0 (PCI11x1x) */

#define L7_ID_REV               0x000
#define L7_FPGA_REV             0x004
#define L7_STRAP_READ           0x00C
#define L7_HW_CFG               0x010
#define   L7_HW_CFG_LRST        (1u << 1)
#define L7_PMT_CTL              0x014
#define   L7_PMT_CTL_READY      (1u << 7)
#define   L7_PMT_CTL_PHY_RST    (1u << 4)
#define L7_DP_SEL               0x024
#define   L7_DP_SEL_DPRDY       (1u << 31)
#define L7_DP_CMD               0x028
#define L7_DP_ADDR              0x02C
#define L7_DP_DATA_0            0x030
#define L7_E2P_CMD              0x040
#define   L7_E2P_CMD_BUSY       (1u << 31)
#define   L7_E2P_CMD_TIMEOUT    (1u << 10)
#define L7_E2P_DATA             0x044
#define L7_GPIO_CFG0            0x050
/*
 * FIFO controller.  FCT_INT_STS and its bits, FCT_RX_USED and the FCT_FLOW
 * fields come from Microchip's pre-mainline lan743x.h v0.2.0.0 (the audit's
 * Appendix B); the mainline driver only writes FCT_RX_CTL/FCT_FLOW.
 */
#define L7_FCT_INT_STS          0x0A0
#define   L7_FCT_INT_RDFO(ch)   (1u << (24 + (ch)))   /* RX data FIFO overflow */
#define L7_FCT_RX_CTL           0x0AC
#define   L7_FCT_RX_CTL_EN(ch)  (1u << (28 + (ch)))
#define   L7_FCT_RX_CTL_DIS(ch) (1u << (24 + (ch)))
#define   L7_FCT_RX_CTL_RESET(ch) (1u << (20 + (ch)))
#define L7_FCT_RX_USED(ch)      (0x0B4 + ((ch) << 2))
#define L7_FCT_TX_CTL           0x0C4
#define   L7_FCT_TX_CTL_RESET(ch) (1u << (20 + (ch)))
#define L7_FCT_FLOW(ch)         (0x0E0 + ((ch) << 2))
#define   L7_FCT_FLOW_OFF_SHIFT 8
#define   L7_FCT_FLOW_OFF_MASK  0x7F00u
#define   L7_FCT_FLOW_REQ_EN    (1u << 7)
#define   L7_FCT_FLOW_ON_MASK   0x7Fu
#define   L7_FCT_FLOW_UNIT      512                   /* bytes, as LAN78xx */

#define L7_MAC_CR               0x100
#define   L7_MAC_CR_CNTR_RST    (1u << 5)
#define   L7_MAC_CR_RST         (1u << 0)
#define L7_MAC_RX               0x104
#define   L7_MAC_RX_MAX_SHIFT   16
#define   L7_MAC_RX_MAX_MASK    0x3FFF0000u
#define   L7_MAC_RX_FSE         (1u << 2)
#define   L7_MAC_RX_RXD         (1u << 1)
#define   L7_MAC_RX_RXEN        (1u << 0)
#define L7_MAC_TX               0x108
#define   L7_MAC_TX_TXD         (1u << 1)
#define   L7_MAC_TX_TXEN        (1u << 0)
#define L7_MAC_FLOW             0x10C
#define   L7_MAC_FLOW_TX_FCEN   (1u << 30)
#define   L7_MAC_FLOW_RX_FCEN   (1u << 29)
#define   L7_MAC_FLOW_FCPT_MASK 0xFFFFu                 /* pause quanta */
/* PHY link partner ability (MII reg 5) without and with symmetric pause;
 * ASYM_PAUSE (bit 11) is never advertised */
#define L7_PHY_LPA_BASE         0xC1E1u
#define L7_PHY_LPA_PAUSE        0x0400u
#define L7_MAC_RX_ADDRH         0x118
#define L7_MAC_RX_ADDRL         0x11C
#define L7_MAC_MII_ACC          0x120
#define   L7_MII_ACC_PHY_SHIFT  11
#define   L7_MII_ACC_REG_SHIFT  6
#define   L7_MII_ACC_CL45       (1u << 3)
#define   L7_MII_ACC_WRITE      (1u << 1)
#define   L7_MII_ACC_BUSY       (1u << 0)
#define L7_MAC_MII_DATA         0x124

#define L7_RFE_ADDR_FILT_HI(x)  (0x400 + 8 * (x))
#define L7_RFE_ADDR_FILT_LO(x)  (0x404 + 8 * (x))
#define   L7_RFE_ADDR_FILT_HI_VALID (1u << 31)
#define L7_RFE_NUM_FILT         33
#define L7_RFE_CTL              0x508
#define   L7_RFE_CTL_TCPUDP_COE (1u << 12)
#define   L7_RFE_CTL_IP_COE     (1u << 11)
#define   L7_RFE_CTL_AB         (1u << 10)
#define   L7_RFE_CTL_AM         (1u << 9)
#define   L7_RFE_CTL_AU         (1u << 8)
#define   L7_RFE_CTL_MCAST_HASH (1u << 3)
#define   L7_RFE_CTL_DA_PERFECT (1u << 1)
#define L7_RFE_RSS_CFG          0x554
#define   L7_RSS_UDP_IPV6_EX    (1u << 16)
#define   L7_RSS_TCP_IPV6_EX    (1u << 15)
#define   L7_RSS_IPV6_EX        (1u << 14)
#define   L7_RSS_UDP_IPV6       (1u << 13)
#define   L7_RSS_TCP_IPV6       (1u << 12)
#define   L7_RSS_IPV6           (1u << 11)
#define   L7_RSS_UDP_IPV4       (1u << 10)
#define   L7_RSS_TCP_IPV4       (1u << 9)
#define   L7_RSS_IPV4           (1u << 8)
#define   L7_RSS_HASH_BITS_SHIFT 5
#define   L7_RSS_HASH_BITS_MASK 0xE0u
#define   L7_RSS_QUEUE_ENABLE   (1u << 2)
#define   L7_RSS_HASH_STORE     (1u << 1)
#define   L7_RSS_ENABLE         (1u << 0)
#define L7_RFE_HASH_KEY(i)      (0x558 + ((i) << 2))
#define L7_RFE_INDX(i)          (0x580 + ((i) << 2))

#define L7_INT_STS              0x780
#define   L7_INT_BIT_DMA_RX(ch) (1u << (24 + (ch)))
#define   L7_INT_BIT_ALL_RX     0x0F000000u
#define   L7_INT_BIT_DMA_TX(ch) (1u << (16 + (ch)))
#define   L7_INT_BIT_ALL_TX     0x000F0000u
#define   L7_INT_BIT_DMA_GEN    (1u << 10)            /* H1 */
#define   L7_INT_BIT_SW_GP      (1u << 9)
#define   L7_INT_BIT_1588       (1u << 7)
#define   L7_INT_BIT_MAS        (1u << 0)
#define L7_INT_SET              0x784
#define L7_INT_EN_SET           0x788
#define L7_INT_EN_CLR           0x78C
#define L7_INT_STS_R2C          0x790
#define L7_INT_VEC_EN_SET       0x794
#define L7_INT_VEC_EN_CLR       0x798
#define L7_INT_VEC_EN_AUTO_CLR  0x79C
#define L7_INT_VEC_MAP0         0x7A0
#define L7_INT_VEC_MAP1         0x7A4
#define L7_INT_VEC_MAP2         0x7A8
#define L7_INT_MOD_MAP0         0x7B0
#define L7_INT_MOD_MAP1         0x7B4
#define L7_INT_MOD_MAP2         0x7B8
#define L7_INT_MOD_CFG0         0x7C0
#define L7_INT_MOD_NUM          10
#define   L7_INT_MOD_CFG_TMODE_CREDIT (1u << 16)        /* H1; 0 = ABS */
#define   L7_INT_MOD_CFG_INTERVAL_MASK 0x1FFFu          /* H1: 13 bits */

#define L7_PTP_CMD_CTL          0xA00
#define   L7_PTP_CMD_LTC_TARGET_READ (1u << 13)
#define   L7_PTP_CMD_STEP_NSEC  (1u << 6)
#define   L7_PTP_CMD_STEP_SEC   (1u << 5)
#define   L7_PTP_CMD_LOAD       (1u << 4)
#define   L7_PTP_CMD_READ       (1u << 3)
#define   L7_PTP_CMD_ENABLE     (1u << 2)
#define   L7_PTP_CMD_DISABLE    (1u << 1)
#define   L7_PTP_CMD_RESET      (1u << 0)
#define L7_PTP_INT_STS          0xA08
#define L7_PTP_INT_EN_SET       0xA0C
#define L7_PTP_INT_EN_CLR       0xA10
#define L7_PTP_CLOCK_SEC        0xA14
#define L7_PTP_CLOCK_NS         0xA18
#define L7_PTP_CLOCK_SUBNS      0xA1C
#define L7_PTP_CLOCK_STEP_ADJ   0xA2C
#define   L7_PTP_STEP_DIR       (1u << 31)
#define   L7_PTP_STEP_MASK      0x3FFFFFFFu

#define L7_DMAC_CFG             0xC00
#define L7_DMAC_COAL_CFG        0xC04
#define   L7_DMAC_CFG_COAL_EN           (1u << 16)
#define   L7_DMAC_COAL_CFG_TIMER_SHIFT  20          /* TIMER_LIMIT 31:20 */
#define   L7_DMAC_COAL_CFG_INT_EXIT     (1u << 17)
#define   L7_DMAC_COAL_CFG_CSR_EXIT     (1u << 16)
#define   L7_DMAC_COAL_CFG_RX_THRES_MASK 0xFFu
#define L7_DMAC_OBFF_CFG        0xC08
#define L7_DMAC_CMD             0xC0C
#define   L7_DMAC_CMD_SWR       (1u << 31)
#define   L7_DMAC_CMD_TX_SWR(ch) (1u << (24 + (ch)))
#define   L7_DMAC_CMD_START_T(ch) (1u << (20 + (ch)))
#define   L7_DMAC_CMD_STOP_T(ch) (1u << (16 + (ch)))
#define   L7_DMAC_CMD_RX_SWR(ch) (1u << (8 + (ch)))
#define   L7_DMAC_CMD_START_R(ch) (1u << (4 + (ch)))
#define   L7_DMAC_CMD_STOP_R(ch) (1u << (0 + (ch)))
#define L7_DMAC_INT_STS         0xC10
#define L7_DMAC_INT_EN_SET      0xC14
#define L7_DMAC_INT_EN_CLR      0xC18
#define   L7_DMAC_INT_ERR       (1u << 21)             /* H1 */
#define   L7_DMAC_INT_RXFRM(ch) (1u << (16 + (ch)))
#define   L7_DMAC_INT_RX_STOP(ch) (1u << (12 + (ch)))  /* H1 */
#define   L7_DMAC_INT_TX_STOP(ch) (1u << (8 + (ch)))   /* H1 */
#define   L7_DMAC_INT_TX_IOC(ch) (1u << (0 + (ch)))

#define L7_RX_CFG_A(ch)         (0xC40 + ((ch) << 6))
#define   L7_RX_CFG_A_WB_SWFLUSH (1u << 31)             /* H1 */
#define   L7_RX_CFG_A_WB_ON_INT_TMR (1u << 30)
#define   L7_RX_CFG_A_WB_THRES_MASK 0x1F000000u
#define   L7_RX_CFG_A_WB_THRES_SHIFT 24
#define   L7_RX_CFG_A_PF_THRES_MASK 0x001F0000u
#define   L7_RX_CFG_A_PF_THRES_SHIFT 16
#define   L7_RX_CFG_A_HP_WB_EN  (1u << 5)
#define L7_RX_CFG_B(ch)         (0xC44 + ((ch) << 6))
#define   L7_RX_CFG_B_TS_ALL_RX (1u << 29)
#define   L7_RX_CFG_B_TS_DESCR_EN (1u << 28)
#define   L7_RX_CFG_B_PAD_MASK  0x03000000u
#define   L7_RX_CFG_B_PAD_SHIFT 24
#define   L7_RX_CFG_B_RING_LEN_MASK 0xFFFFu
#define L7_RX_BASE_ADDRH(ch)    (0xC48 + ((ch) << 6))
#define L7_RX_BASE_ADDRL(ch)    (0xC4C + ((ch) << 6))
#define L7_RX_HEAD_WB_ADDRH(ch) (0xC50 + ((ch) << 6))
#define L7_RX_HEAD_WB_ADDRL(ch) (0xC54 + ((ch) << 6))
#define L7_RX_HEAD(ch)          (0xC58 + ((ch) << 6))
#define L7_RX_TAIL(ch)          (0xC5C + ((ch) << 6))
#define   L7_RX_TAIL_SET_TOP_INT_EN (1u << 30)
#define   L7_RX_TAIL_SET_TOP_INT_VEC_EN (1u << 29)
#define L7_DMAC_RX_ERR_STS(ch)  (0xC60 + ((ch) << 6))  /* H1 */
#define   L7_DMAC_ERR_DESC_READ (1u << 6)              /* H1, RX and TX */
#define   L7_DMAC_ERR_DESC_TAIL (1u << 5)
#define L7_RX_CFG_C(ch)         (0xC64 + ((ch) << 6))
#define   L7_RX_CFG_C_TOP_INT_EN_AUTO_CLR (1u << 6)
#define   L7_RX_CFG_C_INT_EN_R2C (1u << 4)
#define   L7_RX_CFG_C_DMA_INT_STS_AUTO_CLR (1u << 3)
#define   L7_RX_CFG_C_INT_STS_R2C_MODE_MASK 0x7u

#define L7_TX_CFG_A(ch)         (0xD40 + ((ch) << 6))
#define   L7_TX_CFG_A_HP_WB_ON_INT_TMR (1u << 30)
#define   L7_TX_CFG_A_HP_WB_EN  (1u << 5)
#define   L7_TX_CFG_A_HP_WB_THRES_MASK 0xFu
#define L7_TX_CFG_B(ch)         (0xD44 + ((ch) << 6))
#define   L7_TX_CFG_B_RING_LEN_MASK 0xFFFFu
#define L7_TX_BASE_ADDRH(ch)    (0xD48 + ((ch) << 6))
#define L7_TX_BASE_ADDRL(ch)    (0xD4C + ((ch) << 6))
#define L7_TX_HEAD_WB_ADDRH(ch) (0xD50 + ((ch) << 6))
#define L7_TX_HEAD_WB_ADDRL(ch) (0xD54 + ((ch) << 6))
#define L7_TX_HEAD(ch)          (0xD58 + ((ch) << 6))
#define L7_TX_TAIL(ch)          (0xD5C + ((ch) << 6))
#define   L7_TX_TAIL_SET_DMAC_INT_EN (1u << 31)
#define   L7_TX_TAIL_SET_TOP_INT_EN (1u << 30)
#define   L7_TX_TAIL_SET_TOP_INT_VEC_EN (1u << 29)
#define L7_DMAC_TX_ERR_STS(ch)  (0xD60 + ((ch) << 6))  /* H1 */
#define   L7_DMAC_TX_ERR_DATATYPE (1u << 3)    /* data descriptor missing */
#define   L7_DMAC_TX_ERR_EXTNTYPE (1u << 2)    /* extension desc. missing */
#define   L7_DMAC_TX_ERR_EXTRAFS (1u << 1)     /* FS inside a frame */
#define   L7_DMAC_TX_ERR_NOFS   (1u << 0)      /* frame without FS */
#define L7_TX_CFG_C(ch)         (0xD64 + ((ch) << 6))
#define   L7_TX_CFG_C_TOP_INT_EN_AUTO_CLR (1u << 6)
#define   L7_TX_CFG_C_DMA_INT_EN_AUTO_CLR (1u << 5)
#define   L7_TX_CFG_C_INT_EN_R2C (1u << 4)
#define   L7_TX_CFG_C_DMA_INT_STS_AUTO_CLR (1u << 3)
#define   L7_TX_CFG_C_INT_STS_R2C_MODE_MASK 0x7u

#define L7_OTP_PWR_DN           0x1000
#define L7_OTP_READ_DATA        0x1018
#define L7_OTP_CMD_GO           0x1028
#define L7_OTP_STATUS           0x1030

/* MAC statistics */
#define L7_STAT_RX_FCS_ERRORS           0x1200
#define L7_STAT_RX_UNDERSIZE            0x1210
#define L7_STAT_RX_OVERSIZE             0x1214
#define L7_STAT_RX_DROPPED              0x1218
#define L7_STAT_RX_UNICAST_BYTES        0x121C
#define L7_STAT_RX_BROADCAST_BYTES      0x1220
#define L7_STAT_RX_MULTICAST_BYTES      0x1224
#define L7_STAT_RX_UNICAST_FRAMES       0x1228
#define L7_STAT_RX_BROADCAST_FRAMES     0x122C
#define L7_STAT_RX_MULTICAST_FRAMES     0x1230
#define L7_STAT_RX_PAUSE_FRAMES         0x1234
#define L7_STAT_RX_64                   0x1238
#define L7_STAT_RX_TOTAL_FRAMES         0x1254
#define L7_STAT_TX_PAUSE_FRAMES         0x12B8
#define L7_STAT_TX_UNICAST_BYTES        0x12A0
#define L7_STAT_TX_BROADCAST_BYTES      0x12A4
#define L7_STAT_TX_MULTICAST_BYTES      0x12A8
#define L7_STAT_TX_UNICAST_FRAMES       0x12AC
#define L7_STAT_TX_BROADCAST_FRAMES     0x12B0
#define L7_STAT_TX_MULTICAST_FRAMES     0x12B4
#define L7_STAT_TX_64                   0x12BC
#define L7_STAT_TX_TOTAL_FRAMES         0x12D8
#define L7_STAT_FIRST                   0x1200
#define L7_STAT_LAST                    0x12FC

/* Descriptors (16 bytes, little endian) */
#define L7_TXD0_DTYPE_MASK      0xC0000000u
#define L7_TXD0_DTYPE_DATA      0x00000000u
#define L7_TXD0_DTYPE_EXT       0x40000000u
#define L7_TXD0_FS              (1u << 29)
#define L7_TXD0_LS              (1u << 28)
#define L7_TXD0_EXT             (1u << 27)
#define L7_TXD0_IOC             (1u << 26)
#define L7_TXD0_ICE             (1u << 22)
#define L7_TXD0_IPE             (1u << 21)
#define L7_TXD0_TPE             (1u << 20)
#define L7_TXD0_FCS             (1u << 17)
#define L7_TXD0_TSE             (1u << 16)
#define L7_TXD0_BUF_LEN_MASK    0xFFFFu
#define L7_TXD0_EXT_LSO         (1u << 21)
#define L7_TXD0_EXT_PAYLEN_MASK 0xFFFFFu
#define L7_TXD3_MSS_SHIFT       16
#define L7_TXD3_MSS_MASK        0x3FFF0000u

#define L7_RXD0_OWN             (1u << 15)
#define L7_RXD0_FS              (1u << 31)
#define L7_RXD0_LS              (1u << 30)
#define L7_RXD0_FRAME_LEN_SHIFT 16
#define L7_RXD0_FRAME_LEN_MASK  0x3FFF0000u
#define L7_RXD0_EXT             (1u << 14)
#define L7_RXD0_BUF_LEN_MASK    0x3FFFu
#define L7_RXD1_ICE             (1u << 17)
#define L7_RXD1_TCE             (1u << 16)
#define L7_RXD1_ICSM            (1u << 0)

#define L7_NUM_RX_CH            4
#define L7_MAX_TX_CH            4           /* PCI11x1x; LAN743x: 1 */
#define L7_MAX_VECTORS          16          /* PCI11x1x; LAN743x: 8 */

/* Internal PHY (LAN7430): the driver masks every MDIO address but 1 */
#define L7_PHY_ADDR             1
#define L7_PHY_ID1              0x0007
#define L7_PHY_ID2              0xC132

/*
 * External RGMII PHY (LAN7431): a KSZ9031RNX-like PHY (Microchip's RGMII
 * GbE PHY; identifier 0x0022:0x1622, Linux PHY_ID_KSZ9031 0x00221620 + rev
 * 2).  Its address is set by PHYAD[2:0] straps (0..7 on the KSZ9031RNX);
 * the default 7 is an estimate, property phy-addr.
 */
#define L7_EXT_PHY_ADDR         7
#define L7_EXT_PHY_ID1          0x0022
#define L7_EXT_PHY_ID2          0x1622
/* PCI11x1x boards: a KSZ9131RNX-like PHY (0x0022:0x1642; estimate) */
#define L7_HS_PHY_ID1           0x0022
#define L7_HS_PHY_ID2           0x1642

#endif
