// The datasources the dashboards use, with the fixed uids that
// dashboards/provisioning/datasources/cachebreak.yaml gives them: file
// provisioning never resolves ${DS_…} inputs, so dashboards name uids.
export const INFINITY = { type: 'yesoreyeram-infinity-datasource', uid: 'cachebreak-infinity' };
export const PROMETHEUS = { type: 'prometheus', uid: 'cachebreak-prometheus' };
