import { runService } from "@printshop/shared/service-main";
import { quotesService } from "./app.ts";

await runService(quotesService);
