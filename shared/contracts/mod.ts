export * from "./common.ts";
export * from "./quotes.ts";
export * from "./account.ts";
