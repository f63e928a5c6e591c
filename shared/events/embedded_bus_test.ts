import { createLogger } from "../log.ts";
import { createTestDatabase } from "../testing/db.ts";
import { createEmbeddedBus } from "./embedded_bus.ts";
import { defineTransportSuite } from "./transport_suite.ts";

const logger = createLogger({ level: "error" });

defineTransportSuite("createEmbeddedBus()", async () => {
  const db = await createTestDatabase();
  const open = () => createEmbeddedBus({ url: db.url, logger });
  const bus = await open();
  return {
    bus,
    newBus: open,
    cleanup: async () => {
      await bus.close();
      await db.drop();
    },
  };
});
