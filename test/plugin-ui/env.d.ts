/// <reference path="../../plugin-ui/env.d.ts" />
