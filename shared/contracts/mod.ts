export * from "./common.ts";
export * from "./quotes.ts";
export * from "./account.ts";
export * from "./quote_items.ts";
export * from "./filters.ts";
export * from "./webhooks.ts";
