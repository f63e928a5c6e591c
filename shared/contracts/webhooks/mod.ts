/** The webhooks service's contract: subscriptions, deliveries, the event catalogue and log. */
import { serviceContract } from "../operation.ts";
import { eventLogOperations } from "./event_log.ts";
import { webhookOperations } from "./webhooks.ts";

export * from "./event_log.ts";
export * from "./webhooks.ts";

/** The tags its resources' operations are listed under, and what each tag's operations do. */
const webhooksTags = {
  Events: "The event catalogue and this organisation's event log, to catch up on missed " +
    "deliveries",
  Webhooks: "Subscriptions of the calling credential, their signing secrets and deliveries",
};

export const webhooksContract = serviceContract("webhooks", {
  ...eventLogOperations,
  ...webhookOperations,
}, { tags: webhooksTags });
