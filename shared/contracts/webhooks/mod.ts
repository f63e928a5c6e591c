/** The webhooks service's contract: subscriptions, deliveries, the event catalogue and log. */
import { serviceContract } from "../operation.ts";
import { eventLogOperations } from "./event_log.ts";
import { webhookOperations } from "./webhooks.ts";

export * from "./event_log.ts";
export * from "./webhooks.ts";

export const webhooksContract = serviceContract("webhooks", {
  ...eventLogOperations,
  ...webhookOperations,
});
