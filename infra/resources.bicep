// Resources of the chunking skill (resource-group scope; see main.bicep for parameters).
// Identity-based access everywhere: no storage keys, no OpenAI keys, no search keys.
param location string
param openAiLocation string
param tags object
param functionAppName string
param appServicePlanName string
param logAnalyticsName string
param appInsightsName string
param searchServiceName string
param openAiAccountName string
param storageAccountName string
param documentsContainerName string
param searchSku string
param embeddingModel string
param embeddingModelVersion string
param embeddingDimensions int
param embeddingDeploymentName string
param embeddingDeploymentSku string
param embeddingCapacity int
param skillAuth string
param entraAppClientId string
param principalId string
param principalType string
param pythonVersion string
param instanceMemoryMB int
param maximumInstanceCount int
param embeddingCache string
param embeddingCacheContainerName string
param embeddingCacheRetentionDays int

@description('API version the skill calls Azure OpenAI with.')
param openAiApiVersion string = '2024-10-21'

@description('The skill answers by then (seconds), inside the skill timeout of 230 s.')
param skillDeadlineSeconds int = 200

var deploymentContainerName = 'app-package'

// Built-in role definition ids.
var roles = {
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  storageBlobDataContributor: 'ba92f5b4-2d11-453d-a403-e96b0029c9fe'
  storageBlobDataReader: '2a2b9908-6ea1-4ae2-8e65-a410df84e7d1'
  monitoringMetricsPublisher: '3913510d-42f4-4e42-8a64-420c390055eb'
  cognitiveServicesOpenAIUser: '5e0bd9bd-7b93-4f28-af87-19fc36ad61bd'
  searchServiceContributor: '7ca78c08-252a-4471-8644-bb5ff32d4ba0'
  searchIndexDataContributor: '8ebe5a00-799e-43f5-93ac-243d3dce84a7'
}

resource logAnalytics 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: { name: 'PerGB2018' }
    retentionInDays: 30
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: appInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: logAnalytics.id
    // Telemetry is sent with the Function's identity (Monitoring Metrics Publisher).
    DisableLocalAuth: true
  }
}

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  // checkov:skip=CKV_AZURE_35: no VNet here; the Flex host, the indexer and uploads reach it over the internet, keys are disabled (Entra only)
  // checkov:skip=CKV_AZURE_59: public endpoint needed without a VNet (Flex host, indexer, uploads); shared keys and anonymous access are off
  // checkov:skip=CKV_AZURE_206: LRS on purpose: the account holds copies of source documents and the app package, both re-creatable
  // checkov:skip=CKV_AZURE_43: false positive: the name is computed (st + uniqueString: 15 lowercase alphanumerics)
  name: storageAccountName
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: { name: 'Standard_LRS' }
  properties: {
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false
    defaultToOAuthAuthentication: true
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      bypass: 'AzureServices'
      defaultAction: 'Allow'
    }
  }
}

resource blobServices 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: storage
  name: 'default'
  properties: {
    // The indexer's NativeBlobSoftDeleteDeletionDetectionPolicy sees deleted documents
    // through blob soft delete; their chunks leave the index on the next run.
    deleteRetentionPolicy: {
      enabled: true
      days: 7
    }
    containerDeleteRetentionPolicy: {
      enabled: true
      days: 7
    }
    // The embedding cache's lifecycle rule deletes entries by last access time: a
    // lookup that reads an entry keeps it (Azure updates the time at most once a day).
    lastAccessTimeTrackingPolicy: {
      enable: true
      name: 'AccessTimeTracking'
      trackingGranularityInDays: 1
      blobType: ['blockBlob']
    }
  }
}

resource deploymentContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: blobServices
  name: deploymentContainerName
  properties: { publicAccess: 'None' }
}

resource documentsContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: blobServices
  name: documentsContainerName
  properties: { publicAccess: 'None' }
}

// The embedding cache: keys and vectors only. The Function reaches it with its identity's
// Storage Blob Data Owner on the account (functionStorage below); the search service's
// reader role is scoped to the documents container, so the cache is as private as the
// index.
resource embeddingCacheContainer 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = if (embeddingCache == 'blob') {
  parent: blobServices
  name: embeddingCacheContainerName
  properties: { publicAccess: 'None' }
}

resource lifecycle 'Microsoft.Storage/storageAccounts/managementPolicies@2023-05-01' = if (embeddingCache == 'blob') {
  parent: storage
  name: 'default'
  properties: {
    policy: {
      rules: [
        {
          name: 'embedding-cache-unused'
          enabled: true
          type: 'Lifecycle'
          definition: {
            filters: {
              blobTypes: ['blockBlob']
              prefixMatch: ['${embeddingCacheContainerName}/']
            }
            actions: {
              baseBlob: {
                delete: { daysAfterLastAccessTimeGreaterThan: embeddingCacheRetentionDays }
              }
            }
          }
        }
      ]
    }
  }
  dependsOn: [blobServices]
}

resource search 'Microsoft.Search/searchServices@2023-11-01' = {
  // checkov:skip=CKV_AZURE_208: one replica keeps a starter deployment cheap; use 3 replicas for the read-write SLA
  // checkov:skip=CKV_AZURE_209: one replica keeps a starter deployment cheap; use 2 replicas for the read SLA
  name: searchServiceName
  location: location
  tags: tags
  sku: { name: searchSku }
  // Reads the blobs, calls Azure OpenAI for query vectors and (entra mode) the skill.
  identity: { type: 'SystemAssigned' }
  properties: {
    replicaCount: 1
    partitionCount: 1
    hostingMode: 'default'
    publicNetworkAccess: 'enabled'
    // Microsoft Entra only: the deploy script and queries sign in with RBAC roles.
    disableLocalAuth: true
  }
}

resource openAi 'Microsoft.CognitiveServices/accounts@2024-10-01' = {
  // checkov:skip=CKV_AZURE_134: no VNet here; the Function and the search service call it over the internet with Entra tokens (local auth disabled)
  name: openAiAccountName
  location: openAiLocation
  tags: tags
  kind: 'OpenAI'
  sku: { name: 'S0' }
  identity: { type: 'SystemAssigned' }
  properties: {
    customSubDomainName: openAiAccountName
    publicNetworkAccess: 'Enabled'
    disableLocalAuth: true
  }
}

resource embeddingDeployment 'Microsoft.CognitiveServices/accounts/deployments@2024-10-01' = {
  parent: openAi
  name: embeddingDeploymentName
  sku: {
    name: embeddingDeploymentSku
    capacity: embeddingCapacity
  }
  properties: {
    model: {
      format: 'OpenAI'
      name: embeddingModel
      version: embeddingModelVersion
    }
  }
}

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  // checkov:skip=CKV_AZURE_225: zone redundancy for Flex Consumption is regional; indexing retries failed documents on the next run
  name: appServicePlanName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    name: 'FC1'
    tier: 'FlexConsumption'
  }
  properties: { reserved: true }
}

resource functionApp 'Microsoft.Web/sites@2024-04-01' = {
  // checkov:skip=CKV_AZURE_222: the search service calls the skill over the internet (no VNet or shared private link here); a function key or Entra token is required
  // checkov:skip=CKV_AZURE_17: the indexer does not present client certificates; it authenticates with a key or an Entra token
  // checkov:skip=CKV_AZURE_212: Flex Consumption scales to zero on purpose; an indexer tolerates a cold start within its 230 s timeout
  // checkov:skip=CKV_AZURE_213: the only unauthenticated path would be a health probe; Flex Consumption replaces unhealthy instances itself
  name: functionAppName
  location: location
  tags: union(tags, { 'azd-service-name': 'skill' })
  kind: 'functionapp,linux'
  identity: { type: 'SystemAssigned' }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    siteConfig: {
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      http20Enabled: true
      appSettings: [
        // Host storage through the Function's identity (Storage Blob Data Owner).
        { name: 'AzureWebJobsStorage__accountName', value: storage.name }
        { name: 'APPLICATIONINSIGHTS_CONNECTION_STRING', value: appInsights.properties.ConnectionString }
        { name: 'APPLICATIONINSIGHTS_AUTHENTICATION_STRING', value: 'Authorization=AAD' }
        // Embeddings with the Function's identity (Cognitive Services OpenAI User): no key.
        { name: 'EMBEDDING_PROVIDER', value: 'azure_openai' }
        { name: 'AZURE_OPENAI_ENDPOINT', value: openAi.properties.endpoint }
        { name: 'AZURE_OPENAI_EMBEDDING_DEPLOYMENT', value: embeddingDeployment.name }
        { name: 'AZURE_OPENAI_API_VERSION', value: openAiApiVersion }
        { name: 'EMBEDDING_MODEL', value: embeddingModel }
        { name: 'EMBEDDING_DIMENSIONS', value: string(embeddingDimensions) }
        { name: 'SKILL_DEADLINE_SECONDS', value: string(skillDeadlineSeconds) }
        // The embedding cache, with the Function's identity (Storage Blob Data Owner): no key.
        { name: 'EMBEDDING_CACHE', value: embeddingCache }
        { name: 'EMBEDDING_CACHE_ACCOUNT_URL', value: storage.properties.primaryEndpoints.blob }
        { name: 'EMBEDDING_CACHE_CONTAINER', value: embeddingCacheContainerName }
        // Easy Auth guards the app in entra mode, so the host stops asking for keys.
        { name: 'FUNCTION_AUTH_LEVEL', value: skillAuth == 'entra' ? 'anonymous' : 'function' }
      ]
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storage.properties.primaryEndpoints.blob}${deploymentContainerName}'
          authentication: { type: 'SystemAssignedIdentity' }
        }
      }
      scaleAndConcurrency: {
        maximumInstanceCount: maximumInstanceCount
        instanceMemoryMB: instanceMemoryMB
      }
      runtime: {
        name: 'python'
        version: pythonVersion
      }
    }
  }
  dependsOn: [deploymentContainer]
}

// entra mode: Easy Auth accepts only tokens for the app registration, from the search
// service's identity (the skill's authResourceId is api://<entraAppClientId>).
resource functionAuth 'Microsoft.Web/sites/config@2024-04-01' = if (skillAuth == 'entra') {
  // checkov:skip=CKV_AZURE_13: false positive: checkov applies Microsoft.Web/sites checks to this authsettingsV2 config resource
  // checkov:skip=CKV_AZURE_63: false positive: checkov applies Microsoft.Web/sites checks to this authsettingsV2 config resource
  // checkov:skip=CKV_AZURE_65: false positive: checkov applies Microsoft.Web/sites checks to this authsettingsV2 config resource
  // checkov:skip=CKV_AZURE_66: false positive: checkov applies Microsoft.Web/sites checks to this authsettingsV2 config resource
  // checkov:skip=CKV_AZURE_70: false positive: checkov applies Microsoft.Web/sites checks to this authsettingsV2 config resource
  // checkov:skip=CKV_AZURE_80: false positive: checkov applies Microsoft.Web/sites checks to this authsettingsV2 config resource
  // checkov:skip=CKV_AZURE_88: false positive: checkov applies Microsoft.Web/sites checks to this authsettingsV2 config resource
  // checkov:skip=CKV_AZURE_222: false positive: checkov applies Microsoft.Web/sites checks to this authsettingsV2 config resource
  parent: functionApp
  name: 'authsettingsV2'
  properties: {
    platform: { enabled: true }
    globalValidation: {
      requireAuthentication: true
      unauthenticatedClientAction: 'Return401'
    }
    identityProviders: {
      azureActiveDirectory: {
        enabled: true
        registration: {
          openIdIssuer: '${environment().authentication.loginEndpoint}${tenant().tenantId}/v2.0'
          clientId: entraAppClientId
        }
        validation: {
          allowedAudiences: ['api://${entraAppClientId}', entraAppClientId]
          defaultAuthorizationPolicy: {
            allowedPrincipals: { identities: [search.identity.principalId] }
          }
        }
      }
    }
  }
}

// --- Role assignments --------------------------------------------------------------

resource functionStorage 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(storage.id, functionApp.id, roles.storageBlobDataOwner)
  scope: storage
  properties: {
    principalId: functionApp.identity.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.storageBlobDataOwner)
  }
}

resource functionMetrics 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(appInsights.id, functionApp.id, roles.monitoringMetricsPublisher)
  scope: appInsights
  properties: {
    principalId: functionApp.identity.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.monitoringMetricsPublisher)
  }
}

resource functionOpenAi 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(openAi.id, functionApp.id, roles.cognitiveServicesOpenAIUser)
  scope: openAi
  properties: {
    principalId: functionApp.identity.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.cognitiveServicesOpenAIUser)
  }
}

// The indexer reads only the documents container, nothing else in the account.
resource searchDocuments 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(documentsContainer.id, search.id, roles.storageBlobDataReader)
  scope: documentsContainer
  properties: {
    principalId: search.identity.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.storageBlobDataReader)
  }
}

// The index's vectorizer embeds queries with the search service's identity.
resource searchOpenAi 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(openAi.id, search.id, roles.cognitiveServicesOpenAIUser)
  scope: openAi
  properties: {
    principalId: search.identity.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.cognitiveServicesOpenAIUser)
  }
}

// The person deploying: manage the search definitions, upload documents, query.
resource userSearchContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(principalId)) {
  name: guid(search.id, principalId, roles.searchServiceContributor)
  scope: search
  properties: {
    principalId: principalId
    principalType: principalType
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.searchServiceContributor)
  }
}

resource userSearchData 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(principalId)) {
  name: guid(search.id, principalId, roles.searchIndexDataContributor)
  scope: search
  properties: {
    principalId: principalId
    principalType: principalType
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.searchIndexDataContributor)
  }
}

resource userDocuments 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(principalId)) {
  name: guid(documentsContainer.id, principalId, roles.storageBlobDataContributor)
  scope: documentsContainer
  properties: {
    principalId: principalId
    principalType: principalType
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.storageBlobDataContributor)
  }
}

resource userOpenAi 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(principalId)) {
  name: guid(openAi.id, principalId, roles.cognitiveServicesOpenAIUser)
  scope: openAi
  properties: {
    principalId: principalId
    principalType: principalType
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.cognitiveServicesOpenAIUser)
  }
}

output searchEndpoint string = 'https://${search.name}.search.windows.net'
output searchServiceName string = search.name
output functionAppName string = functionApp.name
output skillEndpoint string = 'https://${functionApp.properties.defaultHostName}/api/chunk'
output storageAccountName string = storage.name
output storageAccountId string = storage.id
output openAiEndpoint string = openAi.properties.endpoint
