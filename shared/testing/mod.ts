export * from "./db.ts";
export * from "./stack.ts";
export * from "./service.ts";
export * from "./receiver.ts";
export * from "./envelope.ts";
export * from "./events.ts";
export * from "./plans.ts";
export * from "./tcp_relay.ts";
