/**
 * The client closed its connection before the gateway could answer: there is nobody to send an envelope to and
 * nothing went wrong on the gateway's side, so the error handler neither answers nor logs it as an error.
 */
export class ClientGone extends Error {
  constructor(when: string) {
    super(`client closed the connection ${when}`);
    this.name = "ClientGone";
  }
}
