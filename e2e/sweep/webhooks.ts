/** The route sweep's knowledge of the webhooks service (see `sweep.ts`). */
import { waitFor } from "@printshop/shared/net";
import type { ServiceSweep } from "./sweep.ts";

export const webhooksSweep: ServiceSweep = {
  service: "webhooks",
  params: {
    webhookId: "webhookId",
    deliveryId: "deliveryId",
  },
  references: {},
  validBodies: {
    createWebhook: (_f, url) => ({ url, event: "quote.updated" }),
    updateWebhook: (_f, url) => ({ url: `${url}/moved` }),
  },
  // Made before any other module's fixtures: the quote the quotes module creates next is the
  // event whose delivery `settle` waits for.
  async create(client, _fixture, receiverUrl) {
    return {
      webhookId: await client.create("/v1/webhooks", { url: receiverUrl, event: "quote.created" }),
    };
  },
  async settle(client, fixture) {
    let deliveryId = "";
    await waitFor(
      "the fixture's delivery to succeed",
      async () => {
        const page = await client.get(`/v1/webhooks/${fixture.id("webhookId")}/deliveries`);
        const items = (page as { items: { id: string; status: string }[] }).items;
        deliveryId = items.find((d) => d.status === "succeeded")?.id ?? "";
        return deliveryId !== "";
      },
      20_000,
      100,
    );
    return { deliveryId };
  },
  snapshot: (f) => ({
    webhooks: "/v1/webhooks?limit=100",
    deliveries: `/v1/webhooks/${f.id("webhookId")}/deliveries?limit=100`,
  }),
};
