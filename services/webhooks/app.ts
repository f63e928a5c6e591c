import type { Hono } from "hono";
import { webhooksContract } from "@printshop/shared/contracts/webhooks";
import { createServiceApp } from "@printshop/shared/service-app";
import type { ServiceEnv } from "@printshop/shared/service-defaults";
import type { ServiceDefinition, ServiceDeps } from "@printshop/shared/service-main";
import { type Config, ConfigSchema } from "./config.ts";
import { createSecretBox, type SecretBox } from "./delivery/secret_box.ts";
import type { DispatchDeps } from "./dispatch.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import { eventRoutes } from "./routes/events.ts";

/** What the routes and the background worker share: one secret box, one way to deliver. */
export function dispatchDepsOf(deps: ServiceDeps<Config>): () => Promise<DispatchDeps> {
  let box: Promise<SecretBox> | undefined;
  let dispatch: Promise<DispatchDeps> | undefined;
  const { config } = deps;
  return () =>
    dispatch ??= (box ??= createSecretBox(config.WEBHOOK_SECRETS_KEY)).then((secretBox) => ({
      sql: deps.sql,
      box: secretBox,
      logger: deps.logger,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      retrySchedule: config.WEBHOOK_RETRY_SCHEDULE,
    }));
}

export function createApp(deps: ServiceDeps<Config>): Hono<ServiceEnv> {
  const dispatch = dispatchDepsOf(deps);
  const pageSizeMax = deps.config.PAGE_SIZE_MAX;
  return createServiceApp(webhooksContract, deps, {
    ...eventRoutes({ sql: deps.sql, pageSizeMax }),
    ...webhookRoutes({
      sql: deps.sql,
      box: async () => (await dispatch()).box,
      dispatch,
      allowPrivateTargets: deps.config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      pageSizeMax,
    }),
  });
}

/** The service as its process (main.ts) and its tests start it. */
export const webhooksService: ServiceDefinition<typeof ConfigSchema> = {
  service: webhooksContract.service,
  configSchema: ConfigSchema,
  migrations: new URL("./migrations/", import.meta.url),
  buildApp: createApp,
};
