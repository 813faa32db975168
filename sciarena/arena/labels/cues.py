"""Per-discipline cue lexicons, written from the SciArena paper's discipline definitions.

The paper groups its annotators' fields into the four disciplines (appendix B.1):
- Natural Science: physics, chemistry, biology, ecology, mathematics, materials science, environmental
  science, geographic information science, animal science, crop science, horticulture, food science;
- Healthcare: basic and clinical medicine, pharmacy, public health, neuroscience, biomedical engineering;
- Humanities & Social Sciences: economics, psychology, linguistics, history, management, arts and media;
- Engineering: computer science, electrical, mechanical, civil, aviation, optical, power and environment
  engineering, engineering management, industrial design.

Each entry is a phrase a question in that field tends to use: a subfield's name, its objects, methods and
instruments. They are training text for the discipline classifier (discipline_text.py), not rules: a
phrase shared by two fields (a "model", a "trial") simply weighs less once it is learned. Words a
question uses for its tool rather than its topic (machine learning applied to diagnosis) are kept in the
tool's field; the labelled questions teach the classifier that the topic decides.
"""

from __future__ import annotations

CUES: dict[str, tuple[str, ...]] = {
    "Natural Science": (
        "electronvolts", "joules", "units conversion of energy", "co2 reduction catalysts", "surface chemistry",
        "unit cell", "electron microscopy", "ph levels", "titration", "ions", "salts",
        # physics and astronomy
        "physics", "quantum mechanics", "quantum field theory", "particle physics", "higgs boson", "quark", "gluon",
        "neutrino", "electron", "photon", "proton", "neutron", "atom", "atomic nucleus", "nuclear physics",
        "relativity", "general relativity", "spacetime", "gravity", "gravitational waves", "black hole",
        "neutron star", "supernova", "galaxy", "galaxies", "star formation", "stellar", "planet", "exoplanet",
        "solar system", "cosmology", "cosmic microwave background", "dark matter", "dark energy", "big bang",
        "inflation of the early universe", "universe", "telescope", "astronomy", "astrophysics", "redshift",
        "condensed matter", "superconductivity", "superconductor", "magnetism", "spin", "phonon", "crystal lattice",
        "topological insulator", "quantum entanglement", "quantum computing qubits decoherence", "bose-einstein condensate",
        "thermodynamics", "entropy", "statistical mechanics", "phase transition", "fluid dynamics", "plasma physics",
        "optics and light scattering", "laser spectroscopy", "wavelength", "electromagnetic field",
        # chemistry
        "chemistry", "chemical reaction", "reaction mechanism", "catalysis", "catalyst", "enzyme kinetics",
        "organic synthesis", "total synthesis", "molecule", "molecular", "bond", "covalent bond", "hydrogen bond",
        "oxidation", "reduction potential", "redox", "acid", "base", "ph", "solvent", "polymer chemistry",
        "spectroscopy", "nmr", "mass spectrometry", "chromatography", "crystallography", "x-ray diffraction",
        "density functional theory", "dft calculations", "computational chemistry", "molecular dynamics",
        "interatomic potentials", "metal-organic frameworks", "mof", "zeolite", "isotope", "radioactive decay",
        "electrochemistry", "photochemistry", "chirality", "enantiomer", "nanoparticles", "colloid",
        # materials science
        "materials science", "crystal structure", "alloy microstructure", "grain boundaries", "thin films",
        "graphene", "two-dimensional materials", "band gap", "semiconductor physics", "dopant",
        # biology
        "biology", "cell", "cells", "gene", "genes", "genome", "genomics", "dna", "rna", "mrna", "protein",
        "protein folding", "protein structure", "amino acid", "transcription factor", "gene expression",
        "epigenetics", "methylation", "chromatin", "crispr", "mutation", "evolution", "natural selection",
        "phylogenetics", "speciation", "population genetics", "species", "organism", "bacteria", "microbe",
        "microbiome", "virus evolution", "plant", "plants", "photosynthesis", "chloroplast", "mitochondria",
        "metabolism", "cell division", "meiosis", "mitosis", "stem cells", "developmental biology", "embryo",
        "molecular biology", "biochemistry", "biophysics", "structural biology", "cryo-em", "zebrafish",
        "drosophila", "fruit flies", "mice knockout", "yeast", "arabidopsis", "animal behaviour", "insects",
        "bird migration", "fish", "coral", "symbiosis",
        # ecology, earth and environmental science
        "ecology", "ecosystem", "biodiversity", "food web", "predator", "prey", "habitat", "invasive species",
        "conservation biology", "extinction", "pollinators", "bees", "forest", "soil", "wetland", "ocean",
        "marine", "sea level", "glacier", "ice sheet", "climate change", "climate models", "atmosphere",
        "greenhouse gases", "carbon cycle", "nitrogen cycle", "geology", "earthquake", "plate tectonics",
        "volcano", "mantle", "sediment", "rock", "mineral", "paleoclimate", "fossil", "radiocarbon dating",
        "hydrology", "groundwater", "river", "rainfall", "drought", "weather", "meteorology", "aerosols",
        "microplastics", "pollutant", "environmental science", "remote sensing of land cover", "gis",
        "geographic information science", "spatial analysis of landscapes", "satellite imagery of vegetation",
        # agriculture, food
        "crop science", "crop yield", "wheat", "rice", "maize", "soybean", "plant breeding", "horticulture",
        "fruit trees", "greenhouse crops", "agronomy", "fertilizer", "pest", "animal science", "livestock",
        "cattle", "poultry", "dairy cows", "food science", "fermentation", "food chemistry", "shelf life",
        # mathematics
        "mathematics", "theorem", "proof", "conjecture", "prime numbers", "number theory", "algebra",
        "topology", "geometry", "manifold", "differential equations", "partial differential equations",
        "probability theory", "stochastic processes", "combinatorics", "graph theory", "group theory",
        "riemann hypothesis", "calculus", "topological data analysis", "chaos", "dynamical systems",
        # field and laboratory methods of the life and earth sciences, and the objects of physics searches
        "population survey", "mark-recapture", "species abundance", "camera traps", "transect sampling",
        "field experiment on plants", "wildlife", "amphibians", "frogs", "mammals", "birds", "reptiles",
        "axion", "dark matter detection", "particle collider", "large hadron collider", "standard model",
        "neutrino oscillation", "muon", "cosmic rays", "gamma-ray bursts", "pulsar", "quasar", "solar wind",
        "magnetosphere", "seismology", "oceanography", "ocean currents", "tides", "permafrost", "minerals",
        "isotopic analysis", "ice cores", "zoology", "botany", "mycology", "fungi", "microbiology", "virology",
        "entomology", "marine biology", "ornithology", "limnology", "lakes", "crystal growth", "quantum optics",
    ),
    "Healthcare": (
        "readmissions", "hospital readmission", "length of stay", "longitudinal clinical study", "real-world data",
        "real-world evidence", "how well a drug works", "antimicrobial stewardship", "clinical outcomes",
        "health workers", "community health", "caregivers", "care homes", "blood pressure pills",
        # clinical medicine
        "medicine", "medical", "clinical", "clinician", "physician", "doctor", "nurse", "nursing", "hospital",
        "patient", "patients", "diagnosis", "diagnostic", "prognosis", "treatment", "therapy", "therapeutic",
        "disease", "disorder", "syndrome", "symptom", "chronic", "acute", "surgery", "surgical", "anaesthesia",
        "intensive care", "icu", "emergency department", "primary care", "clinical trial", "randomized controlled trial",
        "placebo", "cohort study", "case-control", "clinical guidelines", "dose", "dosing", "adverse events",
        "side effects", "cancer", "tumor", "tumour", "oncology", "chemotherapy", "immunotherapy", "radiotherapy",
        "metastasis", "leukemia", "breast cancer", "lung cancer", "diabetes", "insulin", "hba1c", "obesity",
        "hypertension", "blood pressure", "heart failure", "myocardial infarction", "stroke", "cardiology",
        "cardiovascular", "atrial fibrillation", "cholesterol", "statins", "kidney disease", "dialysis",
        "liver", "hepatitis", "cirrhosis", "asthma", "copd", "pneumonia", "sepsis", "infection", "antibiotics",
        "antimicrobial resistance", "tuberculosis", "malaria", "hiv", "covid-19", "vaccine", "vaccination",
        "immunization", "pandemic", "influenza", "pediatric", "paediatric", "neonatal", "pregnancy", "maternal",
        "obstetrics", "preterm birth", "elderly patients", "frailty", "dementia", "alzheimer's disease",
        "parkinson's disease", "epilepsy", "multiple sclerosis", "migraine", "pain management", "opioids",
        "rehabilitation", "physiotherapy", "wound healing", "transplant", "dermatology", "ophthalmology",
        "glaucoma", "dentistry", "dental", "radiology", "mri scans", "ct scans", "medical imaging",
        "ultrasound imaging", "biopsy", "pathology", "biomarker", "screening", "blood test", "lab values",
        "ecg", "eeg seizure", "sleep apnea", "autoimmune", "rheumatoid arthritis", "inflammation", "allergy",
        # pharmacy and pharmacology
        "pharmacy", "pharmacology", "pharmacist", "drug", "drugs", "medication", "prescription", "pharmacokinetics",
        "pharmacodynamics", "drug interactions", "drug safety", "drug discovery", "ibuprofen", "aspirin",
        "antidepressants", "beta-blockers", "anticoagulants", "generic drugs", "polypharmacy", "toxicity",
        # public health and epidemiology
        "public health", "epidemiology", "epidemiological", "incidence", "prevalence", "mortality", "morbidity",
        "life expectancy", "health outcomes", "health policy", "health care", "healthcare", "health system",
        "health insurance", "smoking cessation", "tobacco", "alcohol use", "physical activity", "nutrition",
        "diet", "air pollution exposure", "hand hygiene", "infection control", "outbreak", "contact tracing",
        "telemedicine", "electronic health records", "ehr", "global health", "health equity", "maternal mortality",
        "confounding by indication", "observational study of patients",
        # mental health, neuroscience
        "mental health", "depression", "anxiety disorder", "schizophrenia", "bipolar disorder", "ptsd", "suicide",
        "psychiatry", "psychiatric", "psychotherapy", "cognitive behavioural therapy", "addiction treatment",
        "neuroscience", "neurons", "neural circuits", "brain", "synapse", "neurotransmitter", "dopamine",
        "hippocampus", "cortex", "neurodegeneration", "neuroimaging", "fmri", "spinal cord injury",
        # basic medicine and biomedical engineering
        "physiology", "anatomy", "immune system", "t cells", "antibodies", "immunology", "pathogen",
        "biomedical engineering", "medical devices", "prosthesis", "pacemaker", "implant", "drug delivery",
        "tissue engineering", "wearable health monitoring", "hearing aids", "insulin pump",
        # clinical practice and the specialties the definitions name
        "gastroenterology", "endocrinology", "nephrology", "urology", "hematology", "anemia", "geriatrics",
        "palliative care", "hospice", "orthopaedics", "fractures of the hip", "osteoporosis", "sports medicine",
        "concussion", "nutrition deficiency", "vitamin d supplementation", "clinical pharmacology",
        "drug resistance in patients", "hospital-acquired infections", "health services research",
        "patient safety", "medical errors", "informed consent", "bioethics of clinical trials",
        "screening programme", "mammography", "colonoscopy", "sexual health", "contraception",
    ),
    "Humanities & Social Sciences": (
        "prospect theory", "loss aversion", "endowment effect", "participatory budgeting", "city governance",
        "thematic analysis", "interview responses", "development economics", "social-science", "social science",
        "essay", "bibliography", "citizens", "voters", "public opinion", "welfare state", "quiz about history",
        # economics
        "economics", "economy", "economic", "economist", "market", "markets", "prices", "inflation",
        "central bank", "monetary policy", "interest rates", "fiscal policy", "taxation", "tax", "gdp",
        "economic growth", "recession", "unemployment", "labour market", "labor market", "wages", "minimum wage",
        "income", "inequality", "poverty", "welfare", "trade", "tariffs", "globalization", "exchange rates",
        "finance", "financial markets", "stock market", "banking", "investors", "asset pricing", "household savings",
        "retirement savings", "pension", "insurance markets", "moral hazard", "adverse selection", "game theory",
        "auction", "behavioural economics", "behavioral economics", "nudging", "incentives", "consumer",
        "development economics", "microfinance", "remittances", "econometrics", "difference-in-differences",
        "instrumental variables", "regression discontinuity", "causal inference from census data", "housing market",
        # management, business
        "management", "organization", "organisational", "firms", "business", "corporate", "strategy",
        "leadership", "employees", "workplace", "entrepreneurship", "startups", "marketing", "brand", "customers",
        "supply chain management", "accounting", "corporate governance", "human resources",
        # psychology
        "psychology", "psychological", "cognitive psychology", "social psychology", "personality", "motivation",
        "memory recall", "attention", "perception", "decision making", "cognitive biases", "heuristics",
        "emotion", "self-esteem", "attitudes", "stereotypes", "prejudice", "child development", "adolescents",
        "developmental psychology", "well-being", "happiness", "loneliness", "replication crisis", "survey respondents",
        # sociology, politics, law, education
        "sociology", "social", "society", "social class", "gender", "race", "ethnicity", "migration", "immigrants",
        "refugees", "urbanization", "religion", "family", "marriage", "social networks", "social media",
        "misinformation", "polarization", "political", "politics", "elections", "voting", "democracy",
        "government", "public policy", "policy", "political science", "international relations", "war", "conflict",
        "law", "legal", "courts", "constitution", "crime", "policing", "prison", "human rights",
        "education", "schools", "students", "teachers", "learning outcomes", "classroom", "curriculum",
        "universities", "literacy", "test scores", "survey", "interviews", "ethnography", "qualitative research",
        "census", "demographics",
        # history, linguistics, philosophy, arts, media
        "history", "historical", "historians", "ancient", "medieval", "renaissance", "early modern",
        "colonialism", "empire", "revolution", "bronze age", "archaeology", "industrial revolution", "cold war",
        "world war", "archives", "manuscripts", "linguistics", "language acquisition", "grammar", "syntax",
        "semantics", "phonology", "dialect", "bilingualism", "sociolinguistics", "discourse", "philosophy",
        "ethics", "epistemology", "morality", "literature", "novel", "poetry", "literary", "art", "arts",
        "painting", "music", "film", "cinema", "theatre", "media", "journalism", "newspapers", "television",
        "advertising", "cultural", "culture", "humanities", "museum", "heritage", "translation studies",
        # classic studies, events and objects of the humanities and social sciences
        "bystander effect", "conformity experiments", "obedience to authority", "cognitive dissonance",
        "social identity", "groupthink", "priming", "implicit bias", "personality traits", "big five",
        "treaty", "peace treaty", "diplomacy", "monarchy", "dynasty", "the roman empire", "ottoman empire",
        "reformation", "enlightenment", "feudalism", "slavery", "civil war", "nationalism", "fascism",
        "communism", "capitalism", "historiography", "oral history", "anthropology", "kinship",
        "human geography", "urban planning and neighbourhoods", "demography", "fertility decline",
        "philosophy of mind", "free will", "utilitarianism", "aesthetics", "rhetoric", "narrative",
        "folklore", "mythology", "art history", "musicology", "literary criticism", "shakespeare",
        "trade unions", "labour history",
    ),
    "Engineering": (
        "pytorch", "tensorflow", "python", "latex", "bleu score", "mesh resolution", "large-eddy simulation",
        "anode", "anodes", "cathode", "electrode", "electrolyte", "rechargeable cells", "capacity fade",
        "moment frame", "sim-to-real", "legged locomotion", "quadrotor", "error message", "bug", "api",
        "function", "variable names", "beam deflection", "latency", "throughput", "bandwidth",
        # computer science and AI
        "computer science", "algorithm", "algorithms", "data structures", "software", "software engineering",
        "programming", "code", "compiler", "operating system", "database", "distributed systems", "cloud computing",
        "networking", "network protocols", "internet", "cybersecurity", "encryption", "cryptography", "malware",
        "privacy-preserving", "federated learning", "machine learning", "deep learning", "neural network",
        "neural networks", "transformer", "attention mechanism", "large language models", "llm", "llms",
        "language model", "chatbot", "natural language processing", "nlp", "computer vision", "object detection",
        "image segmentation", "image classification", "reinforcement learning", "generative models",
        "diffusion models", "gan", "gradient descent", "backpropagation", "overfitting", "regularization",
        "dropout", "batch normalization", "fine-tuning", "pretraining", "embeddings", "retrieval-augmented generation",
        "hallucination", "benchmark", "gpu", "gpus", "training data", "dataset", "graph neural networks",
        "recommender systems", "search engine", "information retrieval", "speech recognition", "machine translation",
        "robotics", "robot", "robots", "autonomous vehicles", "self-driving", "slam", "motion planning",
        "human-computer interaction", "user interface", "edge computing", "iot", "internet of things",
        "quantum computing hardware", "computer architecture", "processor", "chip design", "fpga", "vlsi",
        # electrical, optical, communications
        "electrical engineering", "circuit", "circuits", "transistor", "amplifier", "power electronics",
        "inverter", "converter", "microcontroller", "embedded systems", "signal processing", "filter design",
        "control systems", "controller", "pid controller", "feedback control", "kalman filter", "sensors",
        "sensor", "wireless", "5g", "6g", "mimo", "antenna", "radar", "lidar", "channel coding", "modulation",
        "optical engineering", "optical fiber", "photonics", "lens design", "camera calibration", "imaging sensor",
        # power and energy
        "power engineering", "power grid", "power systems", "smart grid", "transmission lines", "distribution feeder",
        "electricity", "renewable energy", "solar panels", "photovoltaic", "solar cells", "wind turbine",
        "wind farm", "energy storage", "battery", "batteries", "lithium-ion", "electric vehicles", "charging",
        "fuel cells", "hydrogen production", "electrolyzer", "nuclear reactor", "power plant", "energy efficiency",
        "heat pump", "hvac",
        # mechanical, aerospace, civil, environment engineering
        "mechanical engineering", "machine design", "gearbox", "bearing", "vibration", "fatigue", "fracture",
        "stress analysis", "finite element", "cfd", "computational fluid dynamics", "turbulence modelling",
        "heat transfer", "engine", "combustion engine", "turbine", "manufacturing", "additive manufacturing",
        "3d printing", "machining", "welding", "cnc", "industrial design", "product design", "prototype",
        "aviation engineering", "aerospace", "aircraft", "wing", "jet engine", "drone", "drones", "uav",
        "satellite design", "rocket", "civil engineering", "structural engineering", "bridge", "bridges", "building",
        "concrete", "cement", "steel structures", "beam", "foundation", "seismic design", "geotechnical",
        "construction", "infrastructure", "transportation", "traffic", "railway", "highway", "pavement",
        "environment engineering", "wastewater treatment", "water treatment", "desalination", "membrane filtration",
        "air pollution control", "waste management", "recycling",
        # engineering management, process, design
        "engineering management", "project management", "systems engineering", "reliability engineering",
        "quality control", "six sigma", "lean manufacturing", "supply chain optimization", "scheduling",
        "operations research", "optimization", "digital twin", "predictive maintenance", "chemical engineering",
        "process engineering", "reactor design", "scale-up", "engineer", "engineers", "engineering",
        # material properties and standards an engineer designs with
        "yield strength", "tensile strength", "ultimate tensile strength", "young's modulus", "hardness",
        "aluminium alloy", "aluminum alloy", "stainless steel grade", "corrosion", "creep", "fatigue life",
        "tolerance", "surface finish", "torque", "shaft", "gears", "hydraulics", "pneumatics", "pumps",
        "compressor", "piping", "pressure vessel", "thermal management", "cooling system", "sensor fusion",
        "software architecture", "microservices", "unit tests", "version control", "git", "sql query",
        "web application", "mobile app", "compiler optimization", "parallel computing", "cuda",
        "signal-to-noise ratio", "impedance", "pcb layout", "voltage regulator", "motor control",
        "building codes", "load-bearing", "retaining wall", "soil mechanics for foundations",
    ),
}
