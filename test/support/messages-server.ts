export * from '../../src/testing/server.js'
