#include <sstream>

#include "hybridnet/ndarray.h"
#include "hybridnet/symbol.h"

namespace hybridnet {

std::string NDArray::ToString() const {
  std::ostringstream os;
  if (is_symbolic()) {
    os << "<Symbol " << entry_.node->name() << ">";
    return os.str();
  }
  os << "<NDArray " << shape_.ToShortString() << " @cpu(0)>";
  return os.str();
}

}  // namespace hybridnet
