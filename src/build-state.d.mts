/** Types of build-state.mjs (plain JavaScript, read by the bin before there is a build). */
export declare const stampOf: (root: string) => string;
export declare function buildProblem(root: string): string | undefined;
