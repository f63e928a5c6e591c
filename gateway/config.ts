import { z } from "zod";
import {
  eventBusConfig,
  httpUrl,
  limitsConfig,
  logLevel,
  port,
  positiveInt,
  postgresUrl,
  secret,
} from "@printshop/shared/config";

export const ConfigSchema = z.object({
  PORT: port(8080),
  HOST: z.string().default("127.0.0.1"),
  ADMIN_PORT: port(8081),
  ADMIN_HOST: z.string().default("127.0.0.1"),
  PLATFORM_ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters"),
  DATABASE_URL: postgresUrl(),
  INTERNAL_SECRET: secret(),
  QUOTES_URL: httpUrl(),
  CATALOGUE_URL: httpUrl(),
  CRM_URL: httpUrl(),
  PROOFS_URL: httpUrl(),
  WEBHOOKS_URL: httpUrl(),
  PARTNER_JWKS_URL: httpUrl().optional(),
  PARTNER_TOKEN_ISSUER: z.string().optional(),
  PARTNER_TOKEN_AUDIENCE: z.string().optional(),
  RATE_LIMIT_PER_MINUTE: positiveInt(600, 1_000_000),
  ...limitsConfig,
  MAX_BODY_BYTES: positiveInt(1_048_576, 100 * 1_048_576),
  /** How long the gateway waits for a service before answering 503. */
  PROXY_TIMEOUT_MS: positiveInt(30_000, 600_000),
  LOG_LEVEL: logLevel(),
  ...eventBusConfig,
}).superRefine((config, ctx) => {
  const partner = [
    ["PARTNER_JWKS_URL", config.PARTNER_JWKS_URL],
    ["PARTNER_TOKEN_ISSUER", config.PARTNER_TOKEN_ISSUER],
    ["PARTNER_TOKEN_AUDIENCE", config.PARTNER_TOKEN_AUDIENCE],
  ] as const;
  const set = partner.filter(([, value]) => value !== undefined);
  if (set.length > 0 && set.length < partner.length) {
    for (const [name, value] of partner) {
      if (value === undefined) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: "must be set together with the other PARTNER_* variables",
        });
      }
    }
  }
});
export type Config = z.output<typeof ConfigSchema>;
