/*
 * QEMU model of the Microchip LAN7430: the PCI device and its QOM types
 * (realize/exit, properties, one type per chip of the family).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "sysemu/sysemu.h"
#include "lan7430-int.h"
#include "trace.h"

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
    if (s->pci_rev == 0xFFFF) {
        pci_config_set_revision(PCI_DEVICE(s)->config, s->var->revision);
    } else if (s->pci_rev > 0xFF) {
        error_setg(errp, "pci-revision %u: the PCI revision ID is 0..255",
                   s->pci_rev);
        return false;
    } else {
        pci_config_set_revision(PCI_DEVICE(s)->config, s->pci_rev);
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

/*
 * Lab instrumentation: at QEMU's exit, the counters (JSON) into the file
 * the exit-report property names, so that a run whose guest has powered
 * off can still be checked (descriptor errors, write-backs into a freed
 * ring).
 */
static void l7_exit_report(Notifier *n, void *data)
{
    Lan7430State *s = container_of(n, Lan7430State, exit_notifier);
    g_autofree char *json = lan7430_get_counters(OBJECT(s), NULL);
    g_autoptr(GError) err = NULL;

    if (!g_file_set_contents(s->exit_report, json, -1, &err)) {
        error_report("lan7430: exit-report %s: %s", s->exit_report,
                     err->message);
    }
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
    s->fetch_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_fetch_timer_cb, s);
    s->rx_dma_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_rx_dma_timer_cb, s);
    s->coal_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_coal_timer_cb, s);
    s->strict_bh = qemu_bh_new(l7_strict_bh, s);
    s->rxb_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_rx_batch_timer_cb, s);
    s->txb_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_tx_batch_timer_cb, s);
    s->pause_refresh_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                          l7_pause_refresh_cb, s);
    s->peer_pause_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, l7_peer_pause_cb,
                                       s);
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
    if (s->exit_report && *s->exit_report) {
        s->exit_notifier.notify = l7_exit_report;
        qemu_add_exit_notifier(&s->exit_notifier);
    }
}

static void lan7430_exit(PCIDevice *pd)
{
    Lan7430State *s = LAN7430(pd);
    int v;

    if (s->exit_notifier.notify) {
        qemu_remove_exit_notifier(&s->exit_notifier);
        s->exit_notifier.notify = NULL;
    }

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
    timer_free(s->fetch_timer);
    timer_free(s->rx_dma_timer);
    timer_free(s->coal_timer);
    qemu_bh_delete(s->strict_bh);
    timer_free(s->rxb_timer);
    timer_free(s->txb_timer);
    timer_free(s->pause_refresh_timer);
    timer_free(s->peer_pause_timer);
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
    DEFINE_PROP_STRING("exit-report", Lan7430State, exit_report),
    DEFINE_PROP_BOOL("strict-dma", Lan7430State, strict_dma, false),
    DEFINE_PROP_UINT16("pci-revision", Lan7430State, pci_rev, 0xFFFF),
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
    object_class_property_set_description(klass, "strict-dma",
        "on = a device write the driver cannot have wanted (a write-back "
        "after its channel's DMA stop completed, into a ring reprogrammed "
        "since, or a DMA the bus/vIOMMU refused) is an error: reported, "
        "counted in strict_dma_errors and the guest reported panicked "
        "(GUEST_PANICKED); off = only counted");
    object_class_property_set_description(klass, "pci-revision",
        "PCI revision ID (0..255); default the variant's (0x00, an "
        "estimate: the driver does not read it)");
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
