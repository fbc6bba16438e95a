declare module 'swagger-ui-dist' {
  /** Absolute path of the package's static assets. */
  export function absolutePath(): string;
}
