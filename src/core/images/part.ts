/** An image for the model: its bytes and MIME type. */
export interface ImagePart {
  readonly mime: string;
  readonly data: Uint8Array;
}
