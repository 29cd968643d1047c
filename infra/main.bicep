// The chunking skill on Azure: a resource group with a Flex Consumption Function app,
// Azure AI Search, Azure OpenAI (embeddings) and a blob container for the documents.
// `azd up` deploys it; infra/README.md explains the parameters.
targetScope = 'subscription'

@minLength(1)
@maxLength(64)
@description('Name of the azd environment; part of every generated resource name.')
param environmentName string

@minLength(1)
@description('Region of every resource except Azure OpenAI.')
param location string

@description('Region of the Azure OpenAI account (one that has the embedding model); empty: location.')
param openAiLocation string = ''

@description('Resource group name; empty: rg-<environmentName>.')
param resourceGroupName string = ''

@description('Override generated names; empty: <abbreviation>-<token>.')
param functionAppName string = ''
param searchServiceName string = ''
param openAiAccountName string = ''
param storageAccountName string = ''

@description('Blob container the indexer reads the .md/.markdown/.html/.htm documents from.')
param documentsContainerName string = 'documents'

@allowed(['free', 'basic', 'standard', 'standard2', 'standard3', 'storage_optimized_l1', 'storage_optimized_l2'])
@description('Azure AI Search pricing tier; basic or above for managed identity and vectors at any size.')
param searchSku string = 'basic'

@description('Embedding model; the index vector field and the skill use the same dimensions.')
@allowed(['text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002'])
param embeddingModel string = 'text-embedding-3-small'

@description('Model version: 1 for text-embedding-3-*, 2 for text-embedding-ada-002.')
param embeddingModelVersion string = '1'

@minValue(1)
@maxValue(3072)
@description('Vector length: at most 1536 (3-small), 3072 (3-large); exactly 1536 for ada-002.')
param embeddingDimensions int = 1536

@description('Deployment name of the embedding model.')
param embeddingDeploymentName string = 'embedding'

@allowed(['Standard', 'GlobalStandard'])
param embeddingDeploymentSku string = 'GlobalStandard'

@minValue(1)
@description('Embedding deployment capacity in thousands of tokens per minute.')
param embeddingCapacity int = 120

@allowed(['functionKey', 'entra'])
@description('How the search service calls the skill: a function key (default) or Microsoft Entra tokens (authResourceId).')
param skillAuth string = 'functionKey'

@description('entra mode: client (application) id of the app registration the Function validates tokens for.')
param entraAppClientId string = ''

@description('Object id of the person deploying (azd sets it): gets search, blob and OpenAI data roles.')
param principalId string = ''

@allowed(['User', 'ServicePrincipal', 'Group'])
param principalType string = 'User'

@allowed(['3.11', '3.12'])
param pythonVersion string = '3.11'

@allowed([512, 2048, 4096])
param instanceMemoryMB int = 2048

@minValue(40)
@maxValue(1000)
param maximumInstanceCount int = 40

@description('Embedding cache: blob keeps each chunk\'s vector in a container of the storage account (re-indexing embeds only new text); off embeds every chunk every time.')
@allowed(['blob', 'off'])
param embeddingCache string = 'blob'

@description('The embedding cache\'s container (keys and vectors only, no document text).')
param embeddingCacheContainerName string = 'embedding-cache'

@description('Cache entries no lookup has read for this many days are deleted (lifecycle rule on last access time).')
@minValue(1)
@maxValue(3650)
param embeddingCacheRetentionDays int = 30

var tags = { 'azd-env-name': environmentName }
var token = toLower(uniqueString(subscription().id, environmentName, location))

resource rg 'Microsoft.Resources/resourceGroups@2024-03-01' = {
  name: !empty(resourceGroupName) ? resourceGroupName : 'rg-${environmentName}'
  location: location
  tags: tags
}

module resources 'resources.bicep' = {
  name: 'chunking-skill'
  scope: rg
  params: {
    location: location
    openAiLocation: !empty(openAiLocation) ? openAiLocation : location
    tags: tags
    functionAppName: !empty(functionAppName) ? functionAppName : 'func-${token}'
    appServicePlanName: 'plan-${token}'
    logAnalyticsName: 'log-${token}'
    appInsightsName: 'appi-${token}'
    searchServiceName: !empty(searchServiceName) ? searchServiceName : 'srch-${token}'
    openAiAccountName: !empty(openAiAccountName) ? openAiAccountName : 'oai-${token}'
    storageAccountName: !empty(storageAccountName) ? storageAccountName : 'st${token}'
    documentsContainerName: documentsContainerName
    searchSku: searchSku
    embeddingModel: embeddingModel
    embeddingModelVersion: embeddingModelVersion
    embeddingDimensions: embeddingDimensions
    embeddingDeploymentName: embeddingDeploymentName
    embeddingDeploymentSku: embeddingDeploymentSku
    embeddingCapacity: embeddingCapacity
    skillAuth: skillAuth
    entraAppClientId: entraAppClientId
    principalId: principalId
    principalType: principalType
    pythonVersion: pythonVersion
    instanceMemoryMB: instanceMemoryMB
    maximumInstanceCount: maximumInstanceCount
    embeddingCache: embeddingCache
    embeddingCacheContainerName: embeddingCacheContainerName
    embeddingCacheRetentionDays: embeddingCacheRetentionDays
  }
}

// Read by `python -m infra.deploy` (azd writes them to .azure/<env>/.env).
output AZURE_LOCATION string = location
output AZURE_RESOURCE_GROUP string = rg.name
output AZURE_SUBSCRIPTION_ID string = subscription().subscriptionId
output AZURE_SEARCH_ENDPOINT string = resources.outputs.searchEndpoint
output AZURE_SEARCH_SERVICE string = resources.outputs.searchServiceName
output AZURE_FUNCTION_APP_NAME string = resources.outputs.functionAppName
output SKILL_ENDPOINT string = resources.outputs.skillEndpoint
output SKILL_AUTH string = skillAuth
output SKILL_AUTH_RESOURCE_ID string = skillAuth == 'entra' ? 'api://${entraAppClientId}' : ''
output AZURE_STORAGE_ACCOUNT string = resources.outputs.storageAccountName
output AZURE_STORAGE_ACCOUNT_ID string = resources.outputs.storageAccountId
output AZURE_STORAGE_CONTAINER string = documentsContainerName
output AZURE_OPENAI_ENDPOINT string = resources.outputs.openAiEndpoint
output AZURE_OPENAI_EMBEDDING_DEPLOYMENT string = embeddingDeploymentName
output EMBEDDING_MODEL string = embeddingModel
output EMBEDDING_DIMENSIONS int = embeddingDimensions
output EMBEDDING_CACHE string = embeddingCache
output EMBEDDING_CACHE_CONTAINER string = embeddingCacheContainerName
output EMBEDDING_CACHE_RETENTION_DAYS int = embeddingCacheRetentionDays
