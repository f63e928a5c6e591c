/**
 * What every contract is built from: common value types, the list query and filter language,
 * and how operations and events are declared. Each service's own contract is imported from its
 * folder (`@printshop/shared/contracts/quotes`, …); the whole platform from `platform.ts`.
 */
export * from "./common.ts";
export * from "./filters.ts";
export * from "./lists.ts";
export * from "./operation.ts";
export * from "./events.ts";
