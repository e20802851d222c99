export { BodyDecodeError, BodyTooLargeError, type BodyStage } from './body-errors';
export { decodingOrder, type ContentCoding } from './content-encoding';
export { readBody, contentDecoder, isZlibError, type ReadBodyOptions } from './read-body';
export { decodeBuffer } from './decode-buffer';
export { decodeText } from './charset';
export {
  JsonDepthScanner,
  MAX_PARSED_VALUES,
  textDepthExceeds,
  textValuesExceed,
} from './json-depth';
export { parseMediaType, isJsonEssence, isJsonContentType, type MediaType } from './media-type';
export { ChunkList } from './chunk-list';
export { SingleHeaders } from './single-headers';
export { lingeringClose, LINGER_MS, type RawAnswer } from './lingering-close';
export { BROKEN_CONNECTION_CODES } from './broken-connection';
