export * from "./config";
export * from "./constants";
export { Gateway, type GatewayArgs } from "./component";
