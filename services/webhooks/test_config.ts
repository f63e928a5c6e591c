import type { Config } from "./config.ts";

/**
 * The webhooks service's configuration for in-process tests; the database comes from the
 * harness. Private targets are allowed unless a test says otherwise, so a receiver on loopback
 * can be subscribed; retries wait 200 ms so a test can watch a delivery run out of them.
 */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    PORT: 0,
    HOST: "127.0.0.1",
    DATABASE_URL: "postgres://unused",
    INTERNAL_SECRET: "x".repeat(32),
    LOG_LEVEL: "error",
    KAFKA_CLIENT_ID: "printshop",
    KAFKA_SSL: false,
    PAGE_SIZE_MAX: 50,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
    WEBHOOK_RETRY_SCHEDULE: [200, 200],
    WEBHOOK_TIMEOUT_MS: 1000,
    WEBHOOK_SECRETS_KEY: "test-webhook-secrets-key-of-at-least-32-chars",
    ...overrides,
  };
}
