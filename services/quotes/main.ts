import { runService } from "@printshop/shared/service-main";
import { quotesService } from "./app.ts";
import { startCustomerConsumer } from "./consumer.ts";

await runService({
  ...quotesService,
  // Learns the CRM's customers from its events, for each quote's clientName.
  background: startCustomerConsumer,
});
