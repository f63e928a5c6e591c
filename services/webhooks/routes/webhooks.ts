import { WEBHOOK_URL_MAX, type webhookOperations } from "@printshop/shared/contracts/webhooks";
import { ApiError, validationError } from "@printshop/shared/http";
import { eventDefinition } from "@printshop/shared/events";
import type { InternalContext } from "@printshop/shared/internal-context";
import { WEBHOOK_SECRET_OVERLAP_HOURS } from "@printshop/shared/limits";
import type { Handlers } from "@printshop/shared/service-app";
import type { Sql } from "@printshop/shared/db";
import type { SecretBox } from "../delivery/secret_box.ts";
import { checkTargetUrl } from "../delivery/address_guard.ts";
import {
  findSubscription,
  listSubscriptions,
  type Owner,
  rotateSecret,
  subscribe,
  unsubscribe,
  updateSubscriptionUrl,
} from "../store/subscriptions.ts";
import { claimFailedDelivery, findDelivery, listDeliveries } from "../store/deliveries.ts";
import { deliverOnce, type DispatchDeps, leaseMs } from "../dispatch.ts";

export interface WebhookRoutesDeps {
  sql: Sql;
  box: () => Promise<SecretBox>;
  dispatch: () => Promise<DispatchDeps>;
  allowPrivateTargets: boolean;
  pageSizeMax: number;
}

/**
 * The URL as it will be requested: canonical spelling, no fragment (never sent anyway). Checked
 * for reach (SSRF guard) and, once percent-encoded, for length again.
 */
async function checkedTarget(url: string, allowPrivateTargets: boolean): Promise<string> {
  const problem = await checkTargetUrl(url, allowPrivateTargets);
  if (problem) throw validationError("url", problem);
  const parsed = new URL(url);
  parsed.hash = "";
  if (parsed.href.length > WEBHOOK_URL_MAX) {
    throw validationError(
      "url",
      `Must be at most ${WEBHOOK_URL_MAX} characters once percent-encoded (${parsed.href.length})`,
    );
  }
  return parsed.href;
}

/** Subscriptions belong to the calling credential: another credential's answer 404. */
function ownerOf(auth: InternalContext): Owner {
  return {
    organizationId: auth.organizationId,
    credentialKind: auth.credentialKind,
    credentialId: auth.credentialId,
  };
}

/** `/v1/webhooks`: subscriptions, secret rotation, delivery history and replay. */
export function webhookRoutes(deps: WebhookRoutesDeps): Handlers<typeof webhookOperations> {
  const { sql } = deps;
  return {
    listWebhooks: async ({ query, auth }) => ({
      data: await listSubscriptions(sql, ownerOf(auth), query, deps.pageSizeMax),
    }),

    createWebhook: async ({ body, auth, costs }) => {
      const definition = eventDefinition(body.event);
      if (!definition?.readScope) {
        throw validationError(
          "event",
          `Unknown event "${body.event}"; GET /v1/reference/events lists the names`,
        );
      }
      if (!auth.scopes.includes(definition.readScope)) {
        throw new ApiError(
          "insufficient_scope",
          `Subscribing to "${body.event}" needs scope "${definition.readScope}"`,
        );
      }
      const result = await subscribe(sql, await deps.box(), ownerOf(auth), {
        event: body.event,
        // The normalised form, so the same target spelled differently is the same subscription.
        url: await checkedTarget(body.url, deps.allowPrivateTargets),
        includesCosts: costs,
      });
      return result.created
        ? {
          status: 201,
          data: result.subscription,
          message: "Subscribed; store the secret now, it is not shown again",
        }
        : {
          data: result.subscription,
          message: "Already subscribed; the secret is not shown again",
        };
    },

    getWebhook: async ({ params, auth }) => ({
      data: await findSubscription(sql, ownerOf(auth), params.webhookId),
    }),

    updateWebhook: async ({ params, body, auth }) => {
      const url = await checkedTarget(body.url, deps.allowPrivateTargets);
      return {
        data: await updateSubscriptionUrl(sql, ownerOf(auth), params.webhookId, url),
        message: "URL changed; the secret and delivery history stay, queued deliveries follow",
      };
    },

    deleteWebhook: async ({ params, auth }) => {
      const deleted = await unsubscribe(sql, ownerOf(auth), params.webhookId);
      return {
        data: { id: params.webhookId },
        message: deleted ? "Unsubscribed" : "No such subscription; nothing to do",
      };
    },

    rotateWebhookSecret: async ({ params, auth }) => ({
      data: await rotateSecret(sql, await deps.box(), ownerOf(auth), params.webhookId),
      message:
        `Secret rotated; the previous one keeps signing deliveries for ${WEBHOOK_SECRET_OVERLAP_HOURS} hours`,
    }),

    listWebhookDeliveries: async ({ params, query, auth }) => {
      const subscription = await findSubscription(sql, ownerOf(auth), params.webhookId);
      return { data: await listDeliveries(sql, subscription.id, query, deps.pageSizeMax) };
    },

    retryWebhookDelivery: async ({ params, auth }) => {
      const subscription = await findSubscription(sql, ownerOf(auth), params.webhookId);
      const dispatch = await deps.dispatch();
      const claimed = await claimFailedDelivery(
        sql,
        subscription.id,
        params.deliveryId,
        leaseMs(dispatch.timeoutMs),
      );
      await deliverOnce(dispatch, claimed, "manual");
      const delivery = await findDelivery(sql, subscription.id, params.deliveryId);
      const delivered = delivery.status === "succeeded";
      // The envelope's status is the replay's own outcome (spec 2.1): false when it failed again.
      return {
        data: delivery,
        message: delivered ? "Delivered" : "Replayed; the endpoint failed again",
        result: delivered,
      };
    },
  };
}
