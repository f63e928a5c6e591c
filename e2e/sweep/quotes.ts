/** The route sweep's knowledge of the quotes service (see `sweep.ts`). */
import type { ServiceSweep } from "./sweep.ts";

/** Resources a quote names that other services keep: the quotes service keeps their ids as given. */
const QUOTE_CUSTOMER_REFERENCES = {
  clientId: "a CRM customer, kept by the CRM service",
  contactId: "a CRM contact, kept by the CRM service",
  shippingAddressId: "a CRM address, kept by the CRM service",
  mockId: "a mock, kept by the proofs service",
};
const LINE_ITEM_REFERENCE = {
  garmentCatalogueItemId: "a catalogue item, kept by the catalogue service",
};

export const quotesSweep: ServiceSweep = {
  service: "quotes",
  params: {
    quoteId: "quoteId",
    groupId: "groupId",
    lineId: "lineId",
    variantId: "variantId",
    decorationId: "decorationId",
    markupGroupId: "markupGroupId",
  },
  references: {
    markupGroupId: "markupGroupId",
    setupMarkupGroupId: "setupMarkupGroupId",
    taxRateId: "taxRateId",
    garmentCatalogueItemId: "catalogueItemId",
    clientId: "customerId",
    contactId: "customerContactId",
    shippingAddressId: "customerAddressId",
    mockId: "mockId",
  },
  crossService: {
    createQuote: QUOTE_CUSTOMER_REFERENCES,
    updateQuote: QUOTE_CUSTOMER_REFERENCES,
    createQuoteLine: LINE_ITEM_REFERENCE,
    updateQuoteLine: LINE_ITEM_REFERENCE,
    // A preview prices what it is given: like the writes, it keeps these ids as they are.
    previewQuote: { ...QUOTE_CUSTOMER_REFERENCES, ...LINE_ITEM_REFERENCE },
  },
  validBodies: {
    reorderQuoteGroup: (f) => ({
      items: [{ id: f.id("lineId"), kind: "line" }, {
        id: f.id("decorationId"),
        kind: "decoration",
      }],
    }),
  },
  rowIdBodies: {
    reorderQuoteGroup: "a reorder lists the group's lines and decorations by their own ids",
  },
  async create(client) {
    const quoteId = await client.create("/v1/quotes", { reference: "Sweep" });
    const groupId = await client.create(`/v1/quotes/${quoteId}/groups`, { name: "Front" });
    const lineId = await client.create(`/v1/quote-groups/${groupId}/lines`, {
      lineType: "Garment",
      productName: "Gildan 5000",
    });
    const variantId = await client.create(`/v1/quote-lines/${lineId}/variants`, {
      size: "M",
      colour: "Black",
      quantity: 12,
      buyPrice: 6,
      markupType: "percentage",
      markupValue: 33,
    });
    const decorationId = await client.create(`/v1/quote-groups/${groupId}/decorations`, {
      quantity: 12,
      unitCost: 1.2,
      markupType: "percentage",
      markupValue: 50,
    });
    const band = { from: 0, markupType: "percentage", markupValue: 40 };
    const markupGroupId = await client.create("/v1/markup-groups", {
      name: "Garments",
      lane: "garment",
      bands: [{ ...band, from: 1 }],
    });
    const setupMarkupGroupId = await client.create("/v1/markup-groups", {
      name: "Setup",
      lane: "setup",
      bands: [band],
    });
    const taxRateId = await client.create("/v1/tax-rates", { name: "VAT", ratePct: 20 });
    return {
      quoteId,
      groupId,
      lineId,
      variantId,
      decorationId,
      markupGroupId,
      setupMarkupGroupId,
      taxRateId,
    };
  },
  snapshot: () => ({
    quotes: "/v1/quotes?limit=100",
    markupGroups: "/v1/markup-groups?limit=100",
    taxRates: "/v1/tax-rates?limit=100",
  }),
};
