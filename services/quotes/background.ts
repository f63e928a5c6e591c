import type { Background, BackgroundDeps } from "@printshop/shared/service-main";
import type { Config } from "./config.ts";
import { startCustomerConsumer } from "./consumer.ts";

/** Learns the CRM's customers from its events, for each quote's clientName. */
export function quotesBackground(deps: BackgroundDeps<Config>): Promise<Background> {
  return startCustomerConsumer(deps);
}
