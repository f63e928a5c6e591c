import type { Config } from "./config.ts";

/** The quotes service's configuration for in-process tests; the database comes from the harness. */
export function testConfig(pageSizeMax = 200): Config {
  return {
    PORT: 0,
    HOST: "127.0.0.1",
    DATABASE_URL: "postgres://unused",
    INTERNAL_SECRET: "x".repeat(32),
    LOG_LEVEL: "error",
    PAGE_SIZE_MAX: pageSizeMax,
    KAFKA_CLIENT_ID: "printshop",
    KAFKA_SSL: false,
  };
}
