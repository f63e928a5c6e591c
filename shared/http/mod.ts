export * from "./errors.ts";
export * from "./envelope.ts";
export * from "./validation.ts";
