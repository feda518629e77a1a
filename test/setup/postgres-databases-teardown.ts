import { dropWorkerDatabases } from './postgres-databases';

export default dropWorkerDatabases;
