export * from '../../src/scripted/server.js'
