export * from '../../src/core/demo/server.js'
