import { z } from "zod";
import { bool, positiveInt, secret, serviceBaseConfig } from "@printshop/shared/config";
import { parseRetrySchedule } from "./domain/retry_schedule.ts";

export const ConfigSchema = z.object({
  ...serviceBaseConfig,
  /** Only for development and tests: lets subscriptions point at loopback and private hosts. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: bool(false),
  WEBHOOK_RETRY_SCHEDULE: z.string().default("5s,5m,30m,2h,5h,10h,10h").transform(
    (text, ctx) => {
      const parsed = parseRetrySchedule(text);
      if (typeof parsed === "string") {
        ctx.addIssue({ code: "custom", message: parsed });
        return z.NEVER;
      }
      return parsed;
    },
  ),
  // A manual replay sends while the caller waits: the cap keeps one attempt inside the gateway's
  // default PROXY_TIMEOUT_MS (30 s), so the caller gets the outcome instead of a 503.
  WEBHOOK_TIMEOUT_MS: positiveInt(10_000, 25_000),
  /** Encrypts signing secrets at rest (AES-GCM, key derived with HKDF). */
  WEBHOOK_SECRETS_KEY: secret(),
});
export type Config = z.output<typeof ConfigSchema>;
