import { runService } from "@printshop/shared/service-main";
import { proofsService } from "./app.ts";

await runService(proofsService);
