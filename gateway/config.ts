import { z } from "zod";
import { type Cidr, parseCidr } from "./domain/cidr.ts";
import {
  databaseConfig,
  eventBusConfig,
  httpUrl,
  limitsConfig,
  logLevel,
  port,
  positiveInt,
  secret,
} from "@printshop/shared/config";

export const ConfigSchema = z.object({
  PORT: port(8080),
  HOST: z.string().default("127.0.0.1"),
  /**
   * The gateway's address as customers reach it, for links the platform sends them (proof
   * approval links). Unset: the address the public port listens on.
   */
  PUBLIC_URL: httpUrl().optional(),
  ADMIN_PORT: port(8081),
  ADMIN_HOST: z.string().default("127.0.0.1"),
  PLATFORM_ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters"),
  ...databaseConfig,
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
  // The public port's edge (gateway/edge/): what a client connection may take of the process.
  /** From a request head's first byte to its end; past it the connection gets 408 and closes. */
  HEADER_TIMEOUT_MS: positiveInt(10_000, 600_000),
  /** From a head's end to its body's end; also the longest a write to a client may stall. */
  BODY_TIMEOUT_MS: positiveInt(30_000, 3_600_000),
  /** How long a keep-alive connection may sit with no request in progress and no answer owed. */
  IDLE_TIMEOUT_MS: positiveInt(5_000, 600_000),
  /**
   * Open public connections at once; unset, the fewest of what the descriptor limit and
   * CONNECTION_MEMORY_MB allow.
   */
  MAX_CONNECTIONS: z.coerce.number({ error: "must be a number" }).int("must be a whole number")
    .min(1, "must be at least 1").max(1_000_000, "must be at most 1000000").optional(),
  /**
   * The process's descriptor limit, read by whoever starts it (the launcher; the container's
   * entrypoint, from `ulimit -n`), since the process itself may read it only with --allow-all.
   */
  OPEN_FILE_LIMIT: z.preprocess(
    // `ulimit -n` says "unlimited" where there is no limit: the memory bound alone applies.
    (value) => value === "unlimited" ? undefined : value,
    z.coerce.number({ error: "must be a number or unlimited" }).int("must be a whole number")
      .min(16, "must be at least 16").optional(),
  ),
  /** Memory the public connections may take; bounds MAX_CONNECTIONS however many descriptors. */
  CONNECTION_MEMORY_MB: positiveInt(192, 64 * 1024),
  /** Share of MAX_CONNECTIONS one client address (an IPv6 /64) may hold, in per cent. */
  CONNECTIONS_PER_ADDRESS_PERCENT: positiveInt(10, 100),
  /**
   * Peers whose PROXY protocol v2 header and Forwarded / X-Forwarded-For are believed:
   * comma-separated CIDRs (or single addresses). Empty: none.
   */
  TRUSTED_PROXIES: z.string().default("").transform((text, ctx): Cidr[] => {
    const ranges: Cidr[] = [];
    for (const item of text.split(",").map((part) => part.trim()).filter(Boolean)) {
      const range = parseCidr(item);
      if (range) ranges.push(range);
      else {
        ctx.addIssue({
          code: "custom",
          message: `"${item.slice(0, 64)}" is not an address or CIDR range (e.g. 10.0.0.0/8)`,
        });
      }
    }
    return ranges;
  }),
  // Deno's own HTTP server refuses a head over 64 KiB with a bare 400: the edge must refuse first.
  /** Request line and header fields together; over it, 431 (or 414 when the URL is the cause). */
  MAX_HEADER_BYTES: positiveInt(32_768, 60 * 1024),
  /** The request target (path and query); over it, 414. */
  MAX_URL_BYTES: positiveInt(16_384, 60 * 1024),
  LOG_LEVEL: logLevel(),
  ...eventBusConfig,
}).superRefine((config, ctx) => {
  if (config.MAX_URL_BYTES > config.MAX_HEADER_BYTES) {
    ctx.addIssue({
      code: "custom",
      path: ["MAX_URL_BYTES"],
      message: `must be at most MAX_HEADER_BYTES (${config.MAX_HEADER_BYTES}), which includes it`,
    });
  }
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
