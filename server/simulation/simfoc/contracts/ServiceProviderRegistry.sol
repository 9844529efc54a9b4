// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// Our stand-in for the service-provider registry (FilOzone/filecoin-services
/// service_contracts/src/ServiceProviderRegistry.sol), written to the serviceProviderRegistry ABI
/// the Synapse SDK uses. Providers register once per address for a burnt fee, and offer products
/// (only PDP, type 0) described by capability key/value pairs that the SDK decodes
/// (synapse-core utils/pdp-capabilities.ts). Left out: the upgrade machinery (proxy, announcements).
contract ServiceProviderRegistry {
    string public constant VERSION = "1.2.0";
    uint256 public constant REGISTRATION_FEE = 5e18;
    uint256 public constant MAX_CAPABILITY_KEY_LENGTH = 32;
    uint256 public constant MAX_CAPABILITY_VALUE_LENGTH = 128;
    uint256 public constant MAX_CAPABILITIES = 24;
    uint256 private constant MAX_NAME_LENGTH = 128;
    uint256 private constant MAX_DESCRIPTION_LENGTH = 256;
    uint8 private constant PDP = 0;
    /// FEVM's burnt-funds actor f099, where FVMPay.burn sends (filecoin-project/fvm-solidity FVMActors.sol).
    address private constant BURN_ADDRESS = 0xff00000000000000000000000000000000000063;

    struct ServiceProviderInfo {
        address serviceProvider;
        address payee;
        string name;
        string description;
        bool isActive;
    }

    struct ServiceProduct {
        uint8 productType;
        string[] capabilityKeys;
        bool isActive;
    }

    struct ServiceProviderInfoView {
        uint256 providerId;
        ServiceProviderInfo info;
    }

    struct ProviderWithProduct {
        uint256 providerId;
        ServiceProviderInfo providerInfo;
        ServiceProduct product;
        bytes[] productCapabilityValues;
    }

    struct PaginatedProviders {
        ProviderWithProduct[] providers;
        bool hasMore;
    }

    address public immutable owner;
    uint256 private numProviders;
    uint256 public activeProviderCount;
    mapping(uint256 providerId => ServiceProviderInfo) public providers;
    mapping(address providerAddress => uint256 providerId) public addressToProviderId;
    mapping(uint256 providerId => mapping(uint8 productType => ServiceProduct)) public providerProducts;
    mapping(uint256 providerId => mapping(uint8 productType => mapping(string key => bytes value))) public
        productCapabilities;
    mapping(uint8 productType => uint256 count) public productTypeProviderCount;
    mapping(uint8 productType => uint256 count) public activeProductTypeProviderCount;

    event ProviderRegistered(uint256 indexed providerId, address indexed serviceProvider, address indexed payee);
    event ProductAdded(
        uint256 indexed providerId,
        uint8 indexed productType,
        address serviceProvider,
        string[] capabilityKeys,
        bytes[] capabilityValues
    );
    event ProductUpdated(
        uint256 indexed providerId,
        uint8 indexed productType,
        address serviceProvider,
        string[] capabilityKeys,
        bytes[] capabilityValues
    );
    event ProductRemoved(uint256 indexed providerId, uint8 indexed productType);
    event ProviderInfoUpdated(uint256 indexed providerId);
    event ProviderRemoved(uint256 indexed providerId);

    error InsufficientCapabilitiesForProduct(uint8 productType);

    constructor() {
        owner = msg.sender;
    }

    // ---- Registration and changes, each by the provider's own address ----

    /// Registers the caller with its first product; the fee must be exact and is burnt.
    function registerProvider(
        address payee,
        string calldata name,
        string calldata description,
        uint8 productType,
        string[] calldata capabilityKeys,
        bytes[] calldata capabilityValues
    ) external payable returns (uint256 providerId) {
        require(productType == PDP, "only the PDP product (0) is offered");
        require(payee != address(0), "payee is the zero address");
        require(addressToProviderId[msg.sender] == 0, "this address is already a provider");
        require(msg.value == REGISTRATION_FEE, "the registration fee is exactly REGISTRATION_FEE");
        _checkInfo(name, description);

        providerId = ++numProviders;
        providers[providerId] = ServiceProviderInfo({
            serviceProvider: msg.sender, payee: payee, name: name, description: description, isActive: true
        });
        addressToProviderId[msg.sender] = providerId;
        activeProviderCount++;
        emit ProviderRegistered(providerId, msg.sender, payee);

        _storeProduct(providerId, productType, capabilityKeys, capabilityValues);
        emit ProductAdded(providerId, productType, msg.sender, capabilityKeys, capabilityValues);

        (bool burnt,) = BURN_ADDRESS.call{value: msg.value}("");
        require(burnt, "burning the fee failed");
    }

    function addProduct(uint8 productType, string[] calldata capabilityKeys, bytes[] calldata capabilityValues)
        external
    {
        uint256 providerId = _callerProvider(productType);
        require(!providerProducts[providerId][productType].isActive, "the provider already has this product");
        _storeProduct(providerId, productType, capabilityKeys, capabilityValues);
        emit ProductAdded(providerId, productType, msg.sender, capabilityKeys, capabilityValues);
    }

    /// Replaces the product's capabilities: keys no longer listed are gone.
    function updateProduct(uint8 productType, string[] calldata capabilityKeys, bytes[] calldata capabilityValues)
        external
    {
        uint256 providerId = _callerProvider(productType);
        ServiceProduct storage product = providerProducts[providerId][productType];
        require(product.isActive, "the provider has no such product");
        string[] memory keys = capabilityKeys;
        _checkCapabilities(productType, keys, capabilityValues);
        _clearCapabilities(providerId, productType);
        product.capabilityKeys = keys;
        _writeCapabilities(providerId, productType, keys, capabilityValues);
        emit ProductUpdated(providerId, productType, msg.sender, capabilityKeys, capabilityValues);
    }

    function removeProduct(uint8 productType) external {
        uint256 providerId = _callerProvider(productType);
        require(providerProducts[providerId][productType].isActive, "the provider has no such product");
        _clearCapabilities(providerId, productType);
        activeProductTypeProviderCount[productType]--;
        delete providerProducts[providerId][productType];
        emit ProductRemoved(providerId, productType);
    }

    function updateProviderInfo(string calldata name, string calldata description) external {
        uint256 providerId = _callerProvider(PDP);
        _checkInfo(name, description);
        providers[providerId].name = name;
        providers[providerId].description = description;
        emit ProviderInfoUpdated(providerId);
    }

    /// A soft delete: the record stays, inactive, and the address is free to register again.
    function removeProvider() external {
        uint256 providerId = _callerProvider(PDP);
        providers[providerId].isActive = false;
        activeProviderCount--;
        if (providerProducts[providerId][PDP].isActive) {
            activeProductTypeProviderCount[PDP]--;
            _clearCapabilities(providerId, PDP);
            delete providerProducts[providerId][PDP];
        }
        delete addressToProviderId[msg.sender];
        emit ProviderRemoved(providerId);
    }

    // ---- Reads ----

    function getProvider(uint256 providerId) external view returns (ServiceProviderInfoView memory info) {
        _mustExist(providerId);
        info = ServiceProviderInfoView({providerId: providerId, info: providers[providerId]});
    }

    /// An unknown address answers an empty record with id 0 rather than reverting.
    function getProviderByAddress(address providerAddress) external view returns (ServiceProviderInfoView memory info) {
        uint256 providerId = addressToProviderId[providerAddress];
        if (providerId != 0) info = ServiceProviderInfoView({providerId: providerId, info: providers[providerId]});
    }

    function getProviderPayee(uint256 providerId) external view returns (address payee) {
        _mustExist(providerId);
        return providers[providerId].payee;
    }

    function getProviderIdByAddress(address providerAddress) external view returns (uint256) {
        return addressToProviderId[providerAddress];
    }

    function isRegisteredProvider(address provider) external view returns (bool) {
        uint256 providerId = addressToProviderId[provider];
        return providerId != 0 && providers[providerId].isActive;
    }

    function isProviderActive(uint256 providerId) external view returns (bool) {
        _mustExist(providerId);
        return providers[providerId].isActive;
    }

    function providerHasProduct(uint256 providerId, uint8 productType) external view returns (bool) {
        _mustExist(providerId);
        return providerProducts[providerId][productType].isActive;
    }

    /// Every provider ever registered, removed ones included.
    function getProviderCount() external view returns (uint256) {
        return numProviders;
    }

    function getNextProviderId() external view returns (uint256) {
        return numProviders + 1;
    }

    /// A provider without the product answers it inactive with no keys (the SDK then treats it as absent).
    function getProviderWithProduct(uint256 providerId, uint8 productType)
        external
        view
        returns (ProviderWithProduct memory)
    {
        _mustExist(providerId);
        return _withProduct(providerId, productType);
    }

    /// Providers with the product, by id, one page (ServiceProviderRegistry.sol getProvidersByProductType):
    /// `onlyActive` also leaves out removed providers.
    function getProvidersByProductType(uint8 productType, bool onlyActive, uint256 offset, uint256 limit)
        external
        view
        returns (PaginatedProviders memory result)
    {
        uint256 total =
            onlyActive ? activeProductTypeProviderCount[productType] : productTypeProviderCount[productType];
        if (offset >= total || limit == 0) return result;
        if (limit > total - offset) limit = total - offset;
        result.providers = new ProviderWithProduct[](limit);
        result.hasMore = offset + limit < total;
        uint256 seen = 0;
        uint256 filled = 0;
        for (uint256 id = 1; id <= numProviders && filled < limit; id++) {
            if (!providerProducts[id][productType].isActive) continue;
            if (onlyActive && !providers[id].isActive) continue;
            if (seen >= offset) result.providers[filled++] = _withProduct(id, productType);
            seen++;
        }
    }

    function getProductCapabilities(uint256 providerId, uint8 productType, string[] memory keys)
        public
        view
        returns (bytes[] memory values)
    {
        _mustExist(providerId);
        values = new bytes[](keys.length);
        for (uint256 i = 0; i < keys.length; i++) {
            values[i] = productCapabilities[providerId][productType][keys[i]];
        }
    }

    // ---- Internals ----

    function _withProduct(uint256 providerId, uint8 productType) private view returns (ProviderWithProduct memory p) {
        p.providerId = providerId;
        p.providerInfo = providers[providerId];
        p.product = providerProducts[providerId][productType];
        p.productCapabilityValues = getProductCapabilities(providerId, productType, p.product.capabilityKeys);
    }

    /// The caller's provider id; it must be registered and active, and the product type PDP.
    function _callerProvider(uint8 productType) private view returns (uint256 providerId) {
        require(productType == PDP, "only the PDP product (0) is offered");
        providerId = addressToProviderId[msg.sender];
        require(providerId != 0, "the caller is not a registered provider");
        require(providers[providerId].isActive, "the provider is not active");
    }

    /// The SDK matches this revert reason word for word to answer "no such provider"
    /// (synapse-core utils/contract-errors.ts isProviderExistsRevert).
    function _mustExist(uint256 providerId) private view {
        require(providerId > 0 && providerId <= numProviders, "Provider does not exist");
    }

    function _checkInfo(string calldata name, string calldata description) private pure {
        require(bytes(name).length <= MAX_NAME_LENGTH, "name longer than 128 bytes");
        require(bytes(description).length <= MAX_DESCRIPTION_LENGTH, "description longer than 256 bytes");
    }

    function _storeProduct(uint256 providerId, uint8 productType, string[] memory keys, bytes[] calldata values)
        private
    {
        _checkCapabilities(productType, keys, values);
        ServiceProduct storage product = providerProducts[providerId][productType];
        product.productType = productType;
        product.capabilityKeys = keys;
        product.isActive = true;
        _writeCapabilities(providerId, productType, keys, values);
        productTypeProviderCount[productType]++;
        activeProductTypeProviderCount[productType]++;
    }

    /// Sizes as ServiceProviderRegistry.sol _validateCapabilities; then the PDP product must carry the
    /// seven keys its schema requires (checked there with a Bloom filter, here one by one).
    function _checkCapabilities(uint8 productType, string[] memory keys, bytes[] calldata values) private pure {
        require(keys.length == values.length, "as many capability values as keys");
        require(keys.length <= MAX_CAPABILITIES, "more than 24 capabilities");
        uint256 found = 0;
        for (uint256 i = 0; i < keys.length; i++) {
            uint256 keyLength = bytes(keys[i]).length;
            require(keyLength > 0 && keyLength <= MAX_CAPABILITY_KEY_LENGTH, "capability key empty or over 32 bytes");
            require(
                values[i].length > 0 && values[i].length <= MAX_CAPABILITY_VALUE_LENGTH,
                "capability value empty or over 128 bytes"
            );
            found |= _requiredKeyBit(keys[i]);
        }
        if (found != 0x7f) revert InsufficientCapabilitiesForProduct(productType);
    }

    function _requiredKeyBit(string memory key) private pure returns (uint256) {
        bytes32 h = keccak256(bytes(key));
        if (h == keccak256("serviceURL")) return 1;
        if (h == keccak256("minPieceSizeInBytes")) return 2;
        if (h == keccak256("maxPieceSizeInBytes")) return 4;
        if (h == keccak256("storagePricePerTibPerDay")) return 8;
        if (h == keccak256("minProvingPeriodInEpochs")) return 16;
        if (h == keccak256("location")) return 32;
        if (h == keccak256("paymentTokenAddress")) return 64;
        return 0;
    }

    function _writeCapabilities(uint256 providerId, uint8 productType, string[] memory keys, bytes[] calldata values)
        private
    {
        mapping(string => bytes) storage capabilities = productCapabilities[providerId][productType];
        for (uint256 i = 0; i < keys.length; i++) {
            capabilities[keys[i]] = values[i];
        }
    }

    function _clearCapabilities(uint256 providerId, uint8 productType) private {
        string[] storage keys = providerProducts[providerId][productType].capabilityKeys;
        mapping(string => bytes) storage capabilities = productCapabilities[providerId][productType];
        for (uint256 i = 0; i < keys.length; i++) {
            delete capabilities[keys[i]];
        }
    }
}
